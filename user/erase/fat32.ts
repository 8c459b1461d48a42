/**
 * A FAT32 volume as the SD Association's formatter makes one for an SDHC card: 32 KiB clusters,
 * two FATs, the root directory in cluster 2, and the data region starting on a 4 MiB boundary
 * (the reserved area grows to put it there). A drive too small for 65,525 clusters of 32 KiB gets
 * smaller clusters: with fewer, every other OS would read the volume as FAT16.
 */
import { alignUp } from '../../writer/job-memory.js';
import { ERASE_ALIGN, type Patch, type VolumeLayout, type VolumeRequest } from './volume.js';
import { fatLabel } from './label.js';

/** Below this many clusters a FAT is FAT16 by definition (Microsoft's FAT specification). */
const MIN_FAT32_CLUSTERS = 65_525;
/** Above it the entries' 28 bits run out. */
const MAX_FAT32_CLUSTERS = 0x0ffffff5;
const MAX_CLUSTER_BYTES = 32 * 1024;
const MIN_RESERVED_SECTORS = 32;
const FATS = 2;
const FSINFO_SECTOR = 1;
const BACKUP_BOOT_SECTOR = 6;
const ROOT_CLUSTER = 2;

interface Geometry {
  clusterBytes: number;
  reservedSectors: number;
  fatSectors: number;
  clusters: number;
}

/** The layout with clusters of `clusterBytes`, the data region on a 4 MiB boundary. */
function geometry(sectors: number, sectorBytes: number, clusterBytes: number): Geometry {
  const perCluster = clusterBytes / sectorBytes;
  const alignSectors = ERASE_ALIGN / sectorBytes;
  // The FAT is sized for every cluster the partition could hold: a few sectors more than needed.
  const fatSectors = Math.ceil(((Math.floor(sectors / perCluster) + 2) * 4) / sectorBytes);
  const dataStart = alignUp(MIN_RESERVED_SECTORS + FATS * fatSectors, alignSectors);
  const clusters = Math.max(0, Math.floor((sectors - dataStart) / perCluster));
  return { clusterBytes, reservedSectors: dataStart - FATS * fatSectors, fatSectors, clusters };
}

function chooseGeometry(sectors: number, sectorBytes: number): Geometry {
  for (let clusterBytes = MAX_CLUSTER_BYTES; clusterBytes >= sectorBytes; clusterBytes /= 2) {
    const g = geometry(sectors, sectorBytes, clusterBytes);
    if (g.clusters >= MIN_FAT32_CLUSTERS) return { ...g, clusters: Math.min(g.clusters, MAX_FAT32_CLUSTERS) };
  }
  throw new Error(
    `the drive is too small for FAT32 (it needs room for ${MIN_FAT32_CLUSTERS} clusters after 4 MiB of tables)`,
  );
}

const ascii = (text: string): Uint8Array => Uint8Array.from(text, (c) => c.charCodeAt(0));

function bootSector(request: VolumeRequest, g: Geometry, label: string): Uint8Array {
  const { sectorBytes } = request;
  const sector = new Uint8Array(sectorBytes);
  const view = new DataView(sector.buffer);
  sector.set([0xeb, 0x58, 0x90]); // jump over the BPB to the boot code at 0x5a
  sector.set(ascii('SLUICE  '), 3);
  view.setUint16(11, sectorBytes, true);
  sector[13] = g.clusterBytes / sectorBytes;
  view.setUint16(14, g.reservedSectors, true);
  sector[16] = FATS;
  sector[21] = 0xf8; // fixed disk
  view.setUint16(24, 63, true); // sectors per track and heads: the values every LBA tool fills in
  view.setUint16(26, 255, true);
  view.setUint32(28, request.startSector, true);
  view.setUint32(32, request.bytes / sectorBytes, true);
  view.setUint32(36, g.fatSectors, true);
  view.setUint32(44, ROOT_CLUSTER, true);
  view.setUint16(48, FSINFO_SECTOR, true);
  view.setUint16(50, BACKUP_BOOT_SECTOR, true);
  sector[64] = 0x80;
  sector[66] = 0x29; // the next three fields are present
  view.setUint32(67, request.serial >>> 0, true);
  sector.set(ascii(label), 71);
  sector.set(ascii('FAT32   '), 82);
  sector.set([0xf4, 0xeb, 0xfd], 0x5a); // boot code: halt (an erased card is not bootable)
  sector[510] = 0x55;
  sector[511] = 0xaa;
  return sector;
}

function fsInfo(sectorBytes: number, g: Geometry): Uint8Array {
  const sector = new Uint8Array(sectorBytes);
  const view = new DataView(sector.buffer);
  view.setUint32(0, 0x41615252, true);
  view.setUint32(484, 0x61417272, true);
  view.setUint32(488, g.clusters - 1, true); // free: all but the root directory's cluster
  view.setUint32(492, ROOT_CLUSTER + 1, true); // the next free cluster
  view.setUint32(508, 0xaa550000, true);
  return sector;
}

/** The first entries of a FAT: the media byte, the clean-shutdown bits, the root directory's end of chain. */
function fatStart(): Uint8Array {
  const entries = new Uint8Array(12);
  const view = new DataView(entries.buffer);
  view.setUint32(0, 0x0ffffff8, true);
  view.setUint32(4, 0x0fffffff, true);
  view.setUint32(8, 0x0fffffff, true);
  return entries;
}

/** The volume label as the root directory's first entry, where Windows, macOS and blkid look for it. */
function labelEntry(label: string): Uint8Array {
  const entry = new Uint8Array(32);
  entry.set(ascii(label));
  entry[11] = 0x08; // volume label
  return entry;
}

/** Where a FAT32 volume's tables and clusters lie, for a builder that fills them (user/installer/). */
export interface Fat32Layout extends VolumeLayout {
  /** Byte offsets in the partition: the first FAT, and cluster 2 (the root directory's). */
  fatsAt: number;
  fatBytes: number;
  dataAt: number;
}

export function fat32Volume(request: VolumeRequest): Fat32Layout {
  const { sectorBytes } = request;
  const g = chooseGeometry(request.bytes / sectorBytes, sectorBytes);
  const label = fatLabel(request.label);
  const boot = bootSector(request, g, label ?? 'NO NAME    ');
  const info = fsInfo(sectorBytes, g);
  const fatBytes = g.fatSectors * sectorBytes;
  const fatsAt = g.reservedSectors * sectorBytes;
  const dataAt = fatsAt + FATS * fatBytes;
  const patches: Patch[] = [
    { offset: 0, bytes: boot },
    { offset: FSINFO_SECTOR * sectorBytes, bytes: info },
    { offset: BACKUP_BOOT_SECTOR * sectorBytes, bytes: boot },
    { offset: (BACKUP_BOOT_SECTOR + 1) * sectorBytes, bytes: info },
    { offset: fatsAt, bytes: fatStart() },
    { offset: fatsAt + fatBytes, bytes: fatStart() },
    ...(label === null ? [] : [{ offset: dataAt, bytes: labelEntry(label) }]),
  ];
  // Everything up to the end of the root directory's cluster: boot region, both FATs (free
  // entries are zeros) and an empty root directory.
  return {
    metadataBytes: dataAt + g.clusterBytes,
    patches,
    clusterBytes: g.clusterBytes,
    clusters: g.clusters,
    fatsAt,
    fatBytes,
    dataAt,
  };
}
