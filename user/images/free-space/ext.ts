/**
 * Free blocks of an ext2, ext3 or ext4 filesystem, from its block bitmaps. Groups whose bitmap was
 * never written (BLOCK_UNINIT) are worked out as the kernel does: everything but the group's
 * superblock backup and descriptor blocks, and any group's bitmaps and inode table that lie in it
 * (with flex_bg, a flex group's first group holds them all). The group descriptors come right
 * after the superblock and the bitmaps before the data they describe, so a stream knows each
 * group's free blocks before it reaches them.
 * Anything this reader does not understand (bigalloc, meta_bg, a journal waiting for recovery, a
 * filesystem not cleanly unmounted, unknown incompatible features) means no free space: the
 * partition is written whole. Layout: Documentation/filesystems/ext4 in the kernel.
 */
import type { Extent } from '../../../common/domain/extents.js';
import type { FilesystemName } from '../../../common/domain/skipped.js';
import { MAX_READ_BYTES, type ReadImage } from './image-reader.js';

const SUPERBLOCK = 1024;
const MAGIC = 0xef53;

const COMPAT_HAS_JOURNAL = 0x4;
const COMPAT_SPARSE_SUPER2 = 0x200;
const INCOMPAT_EXTENTS = 0x40;
const INCOMPAT_64BIT = 0x80;
const INCOMPAT_FLEX_BG = 0x200;
/**
 * Incompatible features that do not change where blocks or bitmaps are: filetype, extents,
 * 64bit, mmp (its block is allocated), flex_bg, ea_inode, dirdata, csum_seed, largedir,
 * inline_data, encrypt, casefold. Not: compression, recover, journal_dev, meta_bg, or unknown ones.
 */
const KNOWN_INCOMPAT =
  0x2 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x1000 | 0x2000 | 0x4000 | 0x8000 | 0x10000 | 0x20000;
const RO_SPARSE_SUPER = 0x1;
const RO_HUGE_FILE = 0x8;
const RO_GDT_CSUM = 0x10;
const RO_DIR_NLINK = 0x20;
const RO_EXTRA_ISIZE = 0x40;
const RO_METADATA_CSUM = 0x400;
/**
 * Read-only-compatible features that leave the bitmaps meaning what they say: sparse_super,
 * large_file, btree_dir, huge_file, gdt_csum, dir_nlink, extra_isize, quota, metadata_csum,
 * readonly, project, shared_blocks, verity, orphan_present. Not: has_snapshot, bigalloc (a bit
 * per cluster), replica, or unknown ones.
 */
const KNOWN_RO_COMPAT =
  0x1 | 0x2 | 0x4 | 0x8 | 0x10 | 0x20 | 0x40 | 0x100 | 0x400 | 0x1000 | 0x2000 | 0x4000 | 0x8000 | 0x10000;
const STATE_VALID = 0x1;
const STATE_ERROR = 0x2;
const BG_BLOCK_UNINIT = 0x2;
/**
 * More groups than this are not read: 2^17 groups of 128 MiB are 16 TiB, and their tables take
 * about 26 MB here.
 */
const MAX_GROUPS = 1 << 17;

/** What the superblock says, checked. */
export interface ExtSuperblock {
  filesystem: Extract<FilesystemName, 'ext2' | 'ext3' | 'ext4'>;
  blockSize: number;
  blocksCount: number;
  firstDataBlock: number;
  blocksPerGroup: number;
  groups: number;
  descSize: number;
  gdtBlocks: number;
  reservedGdtBlocks: number;
  inodeTableBlocks: number;
  /** BLOCK_UNINIT means what it says only with group descriptor checksums (gdt_csum, metadata_csum). */
  uninitBitmaps: boolean;
  hasSuperBackup: (group: number) => boolean;
}

function isPowerOf(n: number, base: number): boolean {
  let x = n;
  while (x > 1 && x % base === 0) x /= base;
  return x === 1;
}

/**
 * The superblock of the ext filesystem whose first 2048 bytes are `head`, when there is one this
 * reader understands and that fits in `partitionSize` bytes; null otherwise.
 */
export function extSuperblock(head: Buffer, partitionSize: number): ExtSuperblock | null {
  if (head.length < SUPERBLOCK + 1024 || head.readUInt16LE(SUPERBLOCK + 0x38) !== MAGIC) return null;
  const at = (offset: number) => head.readUInt32LE(SUPERBLOCK + offset);
  const half = (offset: number) => head.readUInt16LE(SUPERBLOCK + offset);
  const compat = at(0x5c);
  const incompat = at(0x60);
  const roCompat = at(0x64);
  if ((incompat & ~KNOWN_INCOMPAT) !== 0 || (roCompat & ~KNOWN_RO_COMPAT) !== 0) return null;
  const state = half(0x3a);
  if ((state & STATE_VALID) === 0 || (state & STATE_ERROR) !== 0) return null;
  const logBlock = at(0x18);
  if (logBlock > 6 || at(0x1c) !== logBlock) return null;
  const blockSize = 1024 << logBlock;
  const is64 = (incompat & INCOMPAT_64BIT) !== 0;
  const blocksCount = at(0x04) + (is64 ? at(0x150) * 2 ** 32 : 0);
  const firstDataBlock = at(0x14);
  const blocksPerGroup = at(0x20);
  if (
    firstDataBlock !== (blockSize === 1024 ? 1 : 0) ||
    blocksPerGroup < 256 ||
    blocksPerGroup % 8 !== 0 ||
    blocksPerGroup > 8 * blockSize
  )
    return null;
  if (blocksCount <= firstDataBlock || blocksCount * blockSize > partitionSize) return null;
  const groups = Math.ceil((blocksCount - firstDataBlock) / blocksPerGroup);
  if (groups > MAX_GROUPS) return null;
  const descSize = is64 ? half(0xfe) : 32;
  if (descSize < 32 || descSize > 1024 || (descSize & (descSize - 1)) !== 0 || (is64 && descSize < 64)) return null;
  const revision = at(0x4c);
  const inodeSize = revision === 0 ? 128 : half(0x58);
  const inodesPerGroup = at(0x28);
  if (
    inodeSize < 128 ||
    inodeSize > blockSize ||
    (inodeSize & (inodeSize - 1)) !== 0 ||
    inodesPerGroup === 0 ||
    inodesPerGroup > 8 * blockSize
  )
    return null;
  const sparse2 = (compat & COMPAT_SPARSE_SUPER2) !== 0;
  const backups = [at(0x24c), at(0x250)];
  const sparse = (roCompat & RO_SPARSE_SUPER) !== 0;
  const ext4Features =
    (incompat & (INCOMPAT_EXTENTS | INCOMPAT_64BIT | INCOMPAT_FLEX_BG)) !== 0 ||
    (roCompat & (RO_HUGE_FILE | RO_GDT_CSUM | RO_DIR_NLINK | RO_EXTRA_ISIZE | RO_METADATA_CSUM)) !== 0;
  return {
    filesystem: ext4Features ? 'ext4' : (compat & COMPAT_HAS_JOURNAL) !== 0 ? 'ext3' : 'ext2',
    blockSize,
    blocksCount,
    firstDataBlock,
    blocksPerGroup,
    groups,
    descSize,
    gdtBlocks: Math.ceil((groups * descSize) / blockSize),
    reservedGdtBlocks: half(0xce),
    inodeTableBlocks: Math.ceil((inodesPerGroup * inodeSize) / blockSize),
    uninitBitmaps: (roCompat & (RO_GDT_CSUM | RO_METADATA_CSUM)) !== 0,
    hasSuperBackup: (group) =>
      group === 0 ||
      (sparse2
        ? backups.includes(group)
        : !sparse || group === 1 || isPowerOf(group, 3) || isPowerOf(group, 5) || isPowerOf(group, 7)),
  };
}

/** Each group's bitmap and inode table (block numbers) and flags, from the descriptors. */
interface Groups {
  blockBitmap: Float64Array;
  inodeBitmap: Float64Array;
  inodeTable: Float64Array;
  flags: Uint16Array;
}

async function readDescriptors(read: ReadImage, partition: number, sb: ExtSuperblock): Promise<Groups | null> {
  const groups: Groups = {
    blockBitmap: new Float64Array(sb.groups),
    inodeBitmap: new Float64Array(sb.groups),
    inodeTable: new Float64Array(sb.groups),
    flags: new Uint16Array(sb.groups),
  };
  const start = partition + (sb.firstDataBlock + 1) * sb.blockSize;
  const perRead = Math.floor(MAX_READ_BYTES / sb.descSize);
  for (let first = 0; first < sb.groups; first += perRead) {
    const count = Math.min(perRead, sb.groups - first);
    const bytes = await read(start + first * sb.descSize, count * sb.descSize);
    if (bytes === null || bytes.length < count * sb.descSize) return null;
    for (let i = 0; i < count; i++) {
      const d = i * sb.descSize;
      const wide = (lo: number, hi: number) =>
        bytes.readUInt32LE(d + lo) + (sb.descSize >= 64 ? bytes.readUInt32LE(d + hi) * 2 ** 32 : 0);
      groups.blockBitmap[first + i] = wide(0x0, 0x20);
      groups.inodeBitmap[first + i] = wide(0x4, 0x24);
      groups.inodeTable[first + i] = wide(0x8, 0x28);
      groups.flags[first + i] = bytes.readUInt16LE(d + 0x12);
      // Maps or an inode table outside the filesystem: a descriptor that cannot be believed, so none is.
      const outside = (block: number, count: number) => block < sb.firstDataBlock || block + count > sb.blocksCount;
      if (
        outside(groups.blockBitmap[first + i] ?? 0, 1) ||
        outside(groups.inodeBitmap[first + i] ?? 0, 1) ||
        outside(groups.inodeTable[first + i] ?? 0, sb.inodeTableBlocks)
      )
        return null;
    }
  }
  return groups;
}

/** Every group's bitmaps and inode table, as [first block, blocks], sorted: in use wherever they lie. */
function metadataBlocks(sb: ExtSuperblock, groups: Groups): [number, number][] {
  const blocks: [number, number][] = [];
  for (let g = 0; g < sb.groups; g++) {
    blocks.push(
      [groups.blockBitmap[g] ?? 0, 1],
      [groups.inodeBitmap[g] ?? 0, 1],
      [groups.inodeTable[g] ?? 0, sb.inodeTableBlocks],
    );
  }
  return blocks.sort((a, b) => a[0] - b[0]);
}

/** Free block runs [first, blocks] of group `g` whose bitmap was never written: what the kernel computes. */
function uninitFree(sb: ExtSuperblock, g: number, metadata: readonly [number, number][]): [number, number][] {
  const start = sb.firstDataBlock + g * sb.blocksPerGroup;
  const end = Math.min(start + sb.blocksPerGroup, sb.blocksCount);
  let from = start + (sb.hasSuperBackup(g) ? 1 + sb.gdtBlocks + sb.reservedGdtBlocks : 0);
  const free: [number, number][] = [];
  // The first entry that can reach into the group (none is longer than an inode table).
  let lo = 0;
  let hi = metadata.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((metadata[mid]?.[0] ?? 0) < start - sb.inodeTableBlocks) lo = mid + 1;
    else hi = mid;
  }
  for (let i = lo; i < metadata.length; i++) {
    const [block, count] = metadata[i] ?? [0, 0];
    if (block + count <= from) continue;
    if (block >= end) break;
    if (block > from) free.push([from, block - from]);
    from = Math.max(from, block + count);
  }
  if (end > from) free.push([from, end - from]);
  return free;
}

/** Runs of clear bits among the first `bits` of `bitmap`, as [first bit, count]. */
function clearRuns(bitmap: Buffer, bits: number): [number, number][] {
  const runs: [number, number][] = [];
  let runStart = -1;
  for (let byte = 0; byte * 8 < bits; byte++) {
    const value = bitmap[byte] ?? 0xff;
    // Whole bytes at a time where they are all used or all free: the common case.
    if (value === 0xff && byte * 8 + 8 <= bits) {
      if (runStart >= 0) runs.push([runStart, byte * 8 - runStart]);
      runStart = -1;
      continue;
    }
    if (value === 0 && byte * 8 + 8 <= bits) {
      if (runStart < 0) runStart = byte * 8;
      continue;
    }
    for (let bit = 0; bit < 8 && byte * 8 + bit < bits; bit++) {
      const n = byte * 8 + bit;
      if ((value & (1 << bit)) === 0) {
        if (runStart < 0) runStart = n;
      } else if (runStart >= 0) {
        runs.push([runStart, n - runStart]);
        runStart = -1;
      }
    }
  }
  if (runStart >= 0) runs.push([runStart, bits - runStart]);
  return runs;
}

/**
 * Finds the free blocks of the filesystem at image byte `partition` and hands them to `free` (as
 * image byte ranges) as soon as each group's are known: first the groups without a bitmap, then
 * the others in the order their bitmaps lie. Resolves when it has read all it could.
 */
export async function extFree(
  read: ReadImage,
  partition: number,
  sb: ExtSuperblock,
  free: (extents: Extent[]) => void,
): Promise<void> {
  const groups = await readDescriptors(read, partition, sb);
  if (groups === null) return;
  const toBytes = (runs: readonly [number, number][]): Extent[] =>
    runs.map(([block, count]) => [partition + block * sb.blockSize, count * sb.blockSize]);
  const metadata = metadataBlocks(sb, groups);
  const bitmaps: number[] = [];
  const computed: [number, number][] = [];
  for (let g = 0; g < sb.groups; g++) {
    if (sb.uninitBitmaps && ((groups.flags[g] ?? 0) & BG_BLOCK_UNINIT) !== 0)
      computed.push(...uninitFree(sb, g, metadata));
    else bitmaps.push(g);
  }
  if (computed.length > 0) free(toBytes(computed));
  bitmaps.sort((a, b) => (groups.blockBitmap[a] ?? 0) - (groups.blockBitmap[b] ?? 0));
  // Bitmaps that lie one after another (a flex group's) are read in one question.
  for (let i = 0; i < bitmaps.length;) {
    const first = groups.blockBitmap[bitmaps[i] ?? 0] ?? 0;
    let j = i + 1;
    while (
      j < bitmaps.length &&
      (groups.blockBitmap[bitmaps[j] ?? 0] ?? 0) === first + (j - i) &&
      (j - i + 1) * sb.blockSize <= MAX_READ_BYTES
    )
      j++;
    const bytes = await read(partition + first * sb.blockSize, (j - i) * sb.blockSize);
    const runs: [number, number][] = [];
    for (let k = i; k < j && bytes !== null; k++) {
      const g = bitmaps[k] ?? 0;
      const start = sb.firstDataBlock + g * sb.blocksPerGroup;
      const bits = Math.min(sb.blocksPerGroup, sb.blocksCount - start);
      const bitmap = bytes.subarray((k - i) * sb.blockSize, (k - i + 1) * sb.blockSize);
      if (bitmap.length < sb.blockSize) break;
      for (const [bit, count] of clearRuns(bitmap, bits)) runs.push([start + bit, count]);
    }
    if (runs.length > 0) free(toBytes(runs));
    i = j;
  }
}
