/**
 * An installer stick: one FAT32 partition from 4 MiB to the drive's end (an MBR entry, active, as
 * firmware that boots from a stick's partition looks for), holding every file of the ISO with its
 * long name. The filesystem is laid out here, before anything is written: every folder and file in
 * one run of clusters, in order, so the stick is written front to back in one range (tables,
 * folders, files) and the free clusters after it are left as they were (Sluice made the volume
 * and knows they are free). The drive's last MiB is written too, as erase does, so that no old
 * GPT backup header lingers there.
 */
import { jobError } from '../../common/domain/failure.js';
import { alignDown, alignUp } from '../../writer/job-memory.js';
import { EXTENT_ALIGN } from '../../writer/stream-layout.js';
import { fat32Volume } from '../erase/fat32.js';
import { MAX_SECTORS, mbr } from '../erase/mbr.js';
import { ERASE_ALIGN, TAIL_BYTES } from '../erase/volume.js';
import { ENTRY_BYTES, folderNames, type EntryName } from './fat-names.js';
import type { StickFile, TreeFolder } from './tree.js';

/** Bytes at a drive offset: a table or a folder's records, or a file of the ISO. */
export interface StickPiece {
  offset: number;
  bytes: Uint8Array | null;
  file: StickFile | null;
}

export interface StickPlan {
  driveBytes: number;
  partitionStart: number;
  partitionBytes: number;
  clusterBytes: number;
  /** Clusters the volume has, and those the ISO's folders and files take. */
  clusters: number;
  usedClusters: number;
  /** The ranges written and read back: the volume up to its last used cluster, and the drive's last MiB. */
  extents: [offset: number, length: number][];
  /** Sorted by offset, not overlapping; everything else in the extents is zeros. */
  pieces: StickPiece[];
}

export interface StickRequest {
  driveBytes: number;
  sectorBytes: number;
  /** 32 random bits each. */
  serial: number;
  diskSignature: number;
  image: string;
}

const END_OF_CHAIN = 0x0fffffff;
const ATTRIBUTE_DIRECTORY = 0x10;
const ATTRIBUTE_ARCHIVE = 0x20;

/** A folder with its entries' names chosen, before clusters are given out. */
interface NamedFolder {
  folder: TreeFolder;
  names: EntryName[];
  subfolders: NamedFolder[];
  /** Records the folder holds: its names, and "." and ".." for all but the root. */
  records: number;
}

/** A FAT folder holds at most 65,536 records of 32 bytes (long-name records included). */
const MAX_FOLDER_RECORDS = 65536;

function named(folder: TreeFolder, path: string, image: string): NamedFolder {
  const entries = folderNames(
    [...folder.folders, ...folder.files].map((f) => f.name),
    image,
    path,
  );
  const records = (path === '' ? 0 : 2) + entries.reduce((sum, e) => sum + 1 + e.long.length, 0);
  if (records > MAX_FOLDER_RECORDS)
    throw jobError(
      'unsupported-format',
      `${image} holds a folder ${JSON.stringify(path || '/')} whose names take ${records} FAT records, more than a FAT folder holds (${MAX_FOLDER_RECORDS}).`,
    );
  const subfolders = folder.folders.map((f) => named(f, `${path}/${f.name}`, image));
  return { folder, names: entries, subfolders, records };
}

/** DOS date and time words of a moment. */
function dosStamp(at: Date): { date: number; time: number } {
  return {
    date: ((at.getFullYear() - 1980) << 9) | ((at.getMonth() + 1) << 5) | at.getDate(),
    time: (at.getHours() << 11) | (at.getMinutes() << 5) | (at.getSeconds() >> 1),
  };
}

function shortEntry(
  short: Uint8Array,
  attributes: number,
  cluster: number,
  size: number,
  stamp: { date: number; time: number },
): Uint8Array {
  const entry = new Uint8Array(ENTRY_BYTES);
  const view = new DataView(entry.buffer);
  entry.set(short);
  entry[11] = attributes;
  for (const at of [14, 22]) view.setUint16(at, stamp.time, true);
  for (const at of [16, 18, 24]) view.setUint16(at, stamp.date, true);
  view.setUint16(20, cluster >>> 16, true);
  view.setUint16(26, cluster & 0xffff, true);
  view.setUint32(28, size, true);
  return entry;
}

/** Gives out clusters in order, and records each run's chain for the FAT. */
class Clusters {
  next = 2;
  readonly runs: [first: number, count: number][] = [];

  constructor(private readonly clusterBytes: number) {}

  take(bytes: number): number {
    const count = Math.ceil(bytes / this.clusterBytes);
    if (count === 0) return 0;
    const first = this.next;
    this.runs.push([first, count]);
    this.next += count;
    return first;
  }

  fat(): Uint8Array {
    const entries = new Uint32Array(this.next);
    entries[0] = 0x0ffffff8;
    entries[1] = END_OF_CHAIN;
    for (const [first, count] of this.runs) {
      for (let c = first; c < first + count - 1; c++) entries[c] = c + 1;
      entries[first + count - 1] = END_OF_CHAIN;
    }
    return new Uint8Array(entries.buffer);
  }
}

/** Gives every folder and file its clusters (a folder's contents right after it), and makes each folder's records. */
function placeFolder(
  folder: NamedFolder,
  own: number,
  parent: number,
  clusters: Clusters,
  pieces: StickPiece[],
  dataAt: (cluster: number) => number,
  stamp: { date: number; time: number },
): void {
  const records: Uint8Array[] =
    parent < 0
      ? []
      : [
          shortEntry(
            Uint8Array.from('.          ', (c) => c.charCodeAt(0)),
            ATTRIBUTE_DIRECTORY,
            own,
            0,
            stamp,
          ),
          shortEntry(
            Uint8Array.from('..         ', (c) => c.charCodeAt(0)),
            ATTRIBUTE_DIRECTORY,
            parent,
            0,
            stamp,
          ),
        ];
  const subfolderClusters = folder.subfolders.map((sub) => clusters.take(Math.max(1, sub.records) * ENTRY_BYTES));
  folder.folder.folders.forEach((_, i) => {
    const name = folder.names[i];
    if (name !== undefined)
      records.push(...name.long, shortEntry(name.short, ATTRIBUTE_DIRECTORY, subfolderClusters[i] ?? 0, 0, stamp));
  });
  folder.folder.files.forEach((file, i) => {
    const name = folder.names[folder.folder.folders.length + i];
    const first = clusters.take(file.size);
    if (first !== 0) pieces.push({ offset: dataAt(first), bytes: null, file });
    if (name !== undefined)
      records.push(...name.long, shortEntry(name.short, ATTRIBUTE_ARCHIVE, first, file.size, stamp));
  });
  const bytes = new Uint8Array(records.length * ENTRY_BYTES);
  records.forEach((record, i) => bytes.set(record, i * ENTRY_BYTES));
  pieces.push({ offset: dataAt(own), bytes, file: null });
  // ".." of a folder in the root names cluster 0, as the FAT specification says.
  folder.subfolders.forEach((sub, i) =>
    placeFolder(sub, subfolderClusters[i] ?? 0, parent < 0 ? 0 : own, clusters, pieces, dataAt, stamp),
  );
}

/** The boot region (boot sector, FSInfo, their backups) with FSInfo's free count and next free cluster set. */
function bootRegion(
  patches: readonly { offset: number; bytes: Uint8Array }[],
  fatsAt: number,
  free: number,
  nextFree: number,
): { offset: number; bytes: Uint8Array }[] {
  return patches
    .filter((patch) => patch.offset < fatsAt)
    .map((patch) => {
      const bytes = Uint8Array.from(patch.bytes);
      const view = new DataView(bytes.buffer);
      if (view.getUint32(0, true) === 0x41615252) {
        view.setUint32(488, free, true);
        view.setUint32(492, nextFree, true);
      }
      return { offset: patch.offset, bytes };
    });
}

/** Lays the stick out; throws a JobError when the drive is too small for the ISO's files, or too small for FAT32. */
export function stickPlan(tree: TreeFolder, request: StickRequest): StickPlan {
  const { driveBytes, sectorBytes } = request;
  const partitionStart = ERASE_ALIGN;
  // Past an MBR's reach the drive would be left unwritten without being free space of the volume.
  if (alignDown(driveBytes, sectorBytes) > MAX_SECTORS * sectorBytes)
    throw jobError(
      'unsupported-format',
      `The drive has ${driveBytes} bytes, more than an MBR partition reaches (${MAX_SECTORS * sectorBytes}); an installer stick's FAT32 partition would leave the rest unwritten and unaccounted for. Use a drive of at most 2 TiB.`,
    );
  const partitionBytes = alignDown(driveBytes, sectorBytes) - partitionStart;
  let volume;
  try {
    volume = fat32Volume({
      bytes: partitionBytes,
      sectorBytes,
      startSector: partitionStart / sectorBytes,
      label: null,
      serial: request.serial,
    });
  } catch (error) {
    throw jobError('target-too-small', `The drive is too small for an installer stick: ${(error as Error).message}.`);
  }
  const root = named(tree, '', request.image);
  const clusters = new Clusters(volume.clusterBytes);
  const rootCluster = clusters.take(Math.max(1, root.records) * ENTRY_BYTES);
  const pieces: StickPiece[] = [];
  const dataAt = (cluster: number) => partitionStart + volume.dataAt + (cluster - 2) * volume.clusterBytes;
  placeFolder(root, rootCluster, -1, clusters, pieces, dataAt, dosStamp(new Date()));
  const used = clusters.next - 2;
  if (used > volume.clusters) {
    throw jobError(
      'target-too-small',
      `The drive is too small for this ISO's files: they take ${used} clusters of ${volume.clusterBytes} bytes, and a FAT32 volume on it holds ${volume.clusters}.`,
    );
  }
  const table = mbr({
    sectorBytes,
    startSector: partitionStart / sectorBytes,
    sectors: partitionBytes / sectorBytes,
    type: 0x0c,
    diskSignature: request.diskSignature,
  });
  table[446] = 0x80; // active: firmware that boots from a stick's partition looks for it
  const fat = clusters.fat();
  const tables: StickPiece[] = [
    { offset: 0, bytes: table, file: null },
    ...bootRegion(volume.patches, volume.fatsAt, volume.clusters - used, clusters.next).map((p) => ({
      offset: partitionStart + p.offset,
      bytes: p.bytes,
      file: null,
    })),
  ];
  for (const at of [volume.fatsAt, volume.fatsAt + volume.fatBytes])
    tables.push({ offset: partitionStart + at, bytes: fat, file: null });
  const writtenEnd = Math.min(driveBytes, alignUp(dataAt(clusters.next), EXTENT_ALIGN));
  const tailStart = Math.max(writtenEnd, alignDown(driveBytes - TAIL_BYTES, EXTENT_ALIGN));
  return {
    driveBytes,
    partitionStart,
    partitionBytes,
    clusterBytes: volume.clusterBytes,
    clusters: volume.clusters,
    usedClusters: used,
    extents:
      tailStart > writtenEnd
        ? [
            [0, writtenEnd],
            [tailStart, driveBytes - tailStart],
          ]
        : [[0, driveBytes]],
    pieces: [...tables, ...pieces].sort((a, b) => a.offset - b.offset),
  };
}
