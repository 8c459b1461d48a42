/**
 * What `sluice erase` writes, as the SD Association's formatter lays a card out: one partition
 * from 4 MiB (an SD erase block, so every cluster sits inside one) to the end of the drive, FAT32
 * up to 32 GiB and exFAT above. Only the metadata is written: the head (partition table and the
 * blank gap before the partition), the filesystem's boot region, allocation tables and first
 * clusters, and the drive's last MiB (where an old image's backup GPT would otherwise linger).
 * The rest of the drive is left as it is: free clusters are never read before they are written.
 */
import { eraseFilesystem, type EraseFilesystem } from '../../common/domain/erase.js';
import { MiB } from '../../common/domain/units.js';
import { alignDown, alignUp } from '../../writer/job-memory.js';
import { EXTENT_ALIGN } from '../../writer/stream-layout.js';
import { exfatVolume } from './exfat.js';
import { fat32Volume } from './fat32.js';
import { exfatLabel, fatLabel } from './label.js';
import { mbr } from './mbr.js';

/** Where the partition starts and what every data structure inside it is aligned to. */
export const ERASE_ALIGN = 4 * MiB;
/** The drive's tail that is blanked: an old GPT's backup header lives in its last sector. */
export const TAIL_BYTES = MiB;

/** Bytes to put at a byte offset; everything else in the written ranges is zeros. */
export interface Patch {
  offset: number;
  bytes: Uint8Array;
}

/** The inside of a partition as a filesystem builder lays it out (offsets relative to the partition). */
export interface VolumeLayout {
  /** Bytes from the partition's start that hold metadata: written in full. */
  metadataBytes: number;
  patches: Patch[];
  clusterBytes: number;
  clusters: number;
}

export interface VolumeRequest {
  /** Bytes of the partition: whole sectors. */
  bytes: number;
  sectorBytes: number;
  /** Sectors before the partition (FAT32 records them). */
  startSector: number;
  label: string | null;
  /** A volume serial number: 32 random bits. */
  serial: number;
}

export interface ErasePlan {
  filesystem: EraseFilesystem;
  /** The label as the volume stores it (FAT's in upper case); null for none. */
  label: string | null;
  /** The whole drive: the stream's image size. */
  driveBytes: number;
  partitionStart: number;
  partitionBytes: number;
  clusterBytes: number;
  clusters: number;
  /** The ranges written (and read back), sorted and disjoint, EXTENT_ALIGN-aligned. */
  extents: [offset: number, length: number][];
  patches: Patch[];
}

export interface EraseRequest {
  driveBytes: number;
  sectorBytes: number;
  label: string | null;
  /** 32 random bits for the volume serial number, 32 for the MBR's disk signature. */
  serial: number;
  diskSignature: number;
}

/** The whole drive's layout; throws a plain Error with the reason when the drive cannot take one. */
export function erasePlan(request: EraseRequest): ErasePlan {
  const { driveBytes, sectorBytes } = request;
  if (![512, 1024, 2048, 4096].includes(sectorBytes))
    throw new Error(`a drive with ${sectorBytes}-byte sectors cannot be given FAT32 or exFAT`);
  const partitionStart = ERASE_ALIGN;
  const partitionBytes = alignDown(driveBytes, sectorBytes) - partitionStart;
  const filesystem = eraseFilesystem(driveBytes);
  const volume = {
    bytes: partitionBytes,
    sectorBytes,
    startSector: partitionStart / sectorBytes,
    label: request.label,
    serial: request.serial,
  };
  const inside = filesystem === 'fat32' ? fat32Volume(volume) : exfatVolume(volume);
  const table = mbr({
    sectorBytes,
    startSector: partitionStart / sectorBytes,
    sectors: partitionBytes / sectorBytes,
    type: filesystem === 'fat32' ? 0x0c : 0x07,
    diskSignature: request.diskSignature,
  });
  const metadataEnd = Math.min(driveBytes, alignUp(partitionStart + inside.metadataBytes, EXTENT_ALIGN));
  const tailStart = Math.max(metadataEnd, alignDown(driveBytes - TAIL_BYTES, EXTENT_ALIGN));
  const extents: ErasePlan['extents'] =
    tailStart > metadataEnd
      ? [
          [0, metadataEnd],
          [tailStart, driveBytes - tailStart],
        ]
      : [[0, driveBytes]];
  return {
    filesystem,
    label: filesystem === 'fat32' ? (fatLabel(request.label)?.trimEnd() ?? null) : exfatLabel(request.label),
    driveBytes,
    partitionStart,
    partitionBytes,
    clusterBytes: inside.clusterBytes,
    clusters: inside.clusters,
    extents,
    patches: [
      { offset: 0, bytes: table },
      ...inside.patches.map((p) => ({ offset: partitionStart + p.offset, bytes: p.bytes })),
    ],
  };
}

/** Bytes the plan writes in all. */
export function planBytes(plan: Pick<ErasePlan, 'extents'>): number {
  return plan.extents.reduce((sum, [, length]) => sum + length, 0);
}
