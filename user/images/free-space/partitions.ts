/**
 * The partitions an image's table lists, read strictly, for the free-space rule: a filesystem's
 * free space counts only inside a partition the table really lists, and only where nothing else
 * (another partition, the table itself) lies. A GPT whose checksums do not match is not believed:
 * a system would then read the backup table at the end of the disk, which says who knows what, so
 * nothing of such an image is left out.
 */
import { crc32 } from 'node:zlib';
import type { Extent } from '../../../common/domain/extents.js';
import {
  detectPartitionTable,
  gptEntry,
  gptHeader,
  mbrEntries,
  PARTITION_SNIFF_BYTES,
} from '../formats/partition-table.js';
import type { ReadImage } from './image-reader.js';

/** MBR types of containers for logical partitions, and of a GPT's protective entry: never a filesystem. */
const CONTAINER_TYPES: ReadonlySet<number> = new Set([0x05, 0x0f, 0x85, 0xee]);
/** A GPT entries array larger than this is not believed (128 entries of 128 bytes is the norm). */
const MAX_GPT_ENTRIES_BYTES = 1024 * 1024;

/** One partition as the table lists it. */
export interface ListedPartition {
  /** As the OS numbers it (sdb1): the entry's number. */
  number: number;
  offset: number;
  size: number;
  /** A container (extended, protective) holds no filesystem of its own; its whole range is kept. */
  container: boolean;
}

export interface PartitionLayout {
  type: 'gpt' | 'mbr';
  partitions: ListedPartition[];
  /** Where the table itself lives (and nothing may be left out): before a GPT's first usable sector and after its last. */
  tables: Extent[];
}

/** The GPT, if its header and entries pass their checksums; null otherwise. */
async function readGpt(read: ReadImage, head: Buffer): Promise<PartitionLayout | null> {
  const header = gptHeader(head);
  // Without a protective entry, Linux reads the MBR's partitions instead.
  if (header === null || !mbrEntries(head).some((e) => e.type === 0xee)) return null;
  const { sector } = header;
  if (header.headerSize < 92 || header.headerSize > sector || header.myLba !== 1) return null;
  const bytes = Buffer.from(head.subarray(sector, sector + header.headerSize));
  bytes.writeUInt32LE(0, 16);
  if (crc32(bytes) !== header.headerCrc) return null;
  if (header.entrySize < 128 || header.entrySize % 8 !== 0 || header.entries * header.entrySize > MAX_GPT_ENTRIES_BYTES)
    return null;
  const entries = await read(header.entriesAt, header.entries * header.entrySize);
  if (entries === null || entries.length < header.entries * header.entrySize || crc32(entries) !== header.entriesCrc)
    return null;
  const partitions: ListedPartition[] = [];
  for (let i = 0; i < header.entries; i++) {
    const entry = gptEntry(entries, i * header.entrySize);
    if (entry === null) continue;
    if (entry.lastLba < entry.firstLba) return null;
    partitions.push({
      number: i + 1,
      offset: entry.firstLba * sector,
      size: (entry.lastLba - entry.firstLba + 1) * sector,
      container: false,
    });
  }
  // A hybrid MBR lists partitions of its own beside the protective entry, and some firmware (a
  // Raspberry Pi's) reads only those: one that is not also a GPT partition is kept whole.
  for (const e of mbrEntries(head)) {
    const offset = e.firstSector * 512;
    const size = e.sectors * 512;
    if (e.type === 0xee || partitions.some((p) => p.offset === offset && p.size === size)) continue;
    partitions.push({ number: e.number, offset, size, container: true });
  }
  const usableEnd = (header.lastUsableLba + 1) * sector;
  return {
    type: 'gpt',
    partitions,
    tables: [
      [0, header.firstUsableLba * sector],
      [usableEnd, Number.MAX_SAFE_INTEGER - usableEnd],
    ],
  };
}

/**
 * The image's partition table, or null when it has none Sluice believes. Logical partitions
 * inside an extended one are not looked into: the container is kept whole.
 */
export async function readPartitionLayout(read: ReadImage): Promise<PartitionLayout | null> {
  const head = await read(0, PARTITION_SNIFF_BYTES);
  if (head === null) return null;
  const type = detectPartitionTable(head);
  if (type === 'gpt') return readGpt(read, head);
  if (type !== 'mbr') return null;
  const partitions = mbrEntries(head).map((e) => ({
    number: e.number,
    offset: e.firstSector * 512,
    size: e.sectors * 512,
    container: CONTAINER_TYPES.has(e.type),
  }));
  return { type, partitions, tables: [[0, 512]] };
}
