/** Words the screens use for formats, partition tables, verdicts and phases. */
import type { ImageFormat } from '../../worker/common/image-format.js';
import type { Phase } from '../../worker/common/progress.js';
import type { PartitionTable, Verdict } from '../../electron/common/models.js';

export const FORMAT_LABEL: Readonly<Record<ImageFormat, string>> = {
  raw: 'Raw disk image',
  gzip: 'gzip-compressed image',
  xz: 'xz-compressed image',
  bzip2: 'bzip2-compressed image',
  zstd: 'Zstandard-compressed image',
  zip: 'ZIP archive',
  qcow2: 'QEMU disk image (qcow2)',
  dmg: 'Apple disk image (dmg)',
};

export const PARTITION_TABLE_LABEL: Readonly<Record<PartitionTable, string>> = {
  gpt: 'GPT',
  mbr: 'MBR',
  none: 'None found',
};

export const VERDICT_LABEL: Readonly<Record<Verdict, { badge: string; reason: string }>> = {
  'too-small': { badge: 'Too small', reason: 'Smaller than the image.' },
  source: { badge: 'Holds the image', reason: 'The image file is on this drive.' },
  'read-only': { badge: 'Read-only', reason: 'Write-protected: on an SD card, slide the lock switch up.' },
  system: { badge: 'System drive', reason: 'An internal or system disk. Type its name to choose it.' },
  large: { badge: 'Large drive', reason: 'Larger than 128 GB: make sure it is not a backup disk.' },
};

export const PHASE_LABEL: Readonly<Record<Phase, string>> = {
  decompressing: 'Decompressing',
  writing: 'Writing',
  syncing: 'Syncing',
  verifying: 'Verifying',
};
