/** Words the screens use for formats, partition tables and phases (verdicts: VERDICT_TEXT in electron/common/models.ts). */
import type { ImageFormat } from '../../worker/common/image-format.js';
import type { Phase } from '../../worker/common/progress.js';
import type { PartitionTable } from '../../electron/common/models.js';

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

export const PHASE_LABEL: Readonly<Record<Phase, string>> = {
  decompressing: 'Decompressing',
  writing: 'Writing',
  syncing: 'Syncing',
  verifying: 'Verifying',
};
