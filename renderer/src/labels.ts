/** Words the screens use for formats, partition tables, phases, buses and verdict badges (a verdict's sentence is its own message). */
import type { Drive, DriveBus } from '../../common/domain/drive.js';
import type { ImageFormat } from '../../common/domain/image-format.js';
import type { Verdict } from '../../common/domain/verdict.js';
import type { PartitionTableType } from '../../common/domain/image.js';

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

export const PARTITION_TABLE_LABEL: Readonly<Record<PartitionTableType, string>> = {
  gpt: 'GPT',
  mbr: 'MBR',
  none: 'None found',
};

export const BUS_LABEL: Readonly<Record<DriveBus, string>> = {
  usb: 'USB',
  sd: 'SD',
  sata: 'SATA',
  scsi: 'SCSI',
  pcie: 'PCIe',
  virtual: 'virtual',
  other: '',
};

/** What its owner would call the drive: "SanDisk Ultra", or its bus for a drive that names nothing. */
export function driveName(drive: Pick<Drive, 'description' | 'bus'>): string {
  if (drive.description !== '') return drive.description;
  const bus = BUS_LABEL[drive.bus];
  return bus === '' ? 'Unnamed drive' : `Unnamed ${bus} drive`;
}

/** A verdict's badge in the drive picker. */
export function verdictBadge(verdict: Verdict): string {
  switch (verdict.kind) {
    case 'system':
      return verdict.running ? 'Running system' : 'System drive';
    case 'source':
      return 'Holds the image';
    case 'too-small':
      return 'Too small';
    case 'read-only':
      return 'Read-only';
    case 'large':
      return 'Large drive';
    case 'mounted':
      return 'Mounted';
    case 'virtual':
      return 'Virtual';
  }
}
