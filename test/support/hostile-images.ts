/**
 * Small hostile files that claim far more than they hold, each built from the format's own
 * structures (no tool would write them): the security review's findings for issue 17, made by
 * the tests that refuse them.
 */
import { closeSync, ftruncateSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { constants, crc32, deflateRawSync } from 'node:zlib';
import { KiB, MiB } from '../../common/domain/units.js';

const QCOW2_MAGIC = 0x514649fb;
const QCOW2_V3_HEADER_BYTES = 104;
const COMPRESSED = 1n << 62n;

/** Writes `parts` (buffers at file offsets) into a file of `size` bytes; the rest stays a hole. */
function writeSparse(path: string, size: number, parts: [number, Buffer][]): void {
  const fd = openSync(path, 'w');
  try {
    ftruncateSync(fd, size);
    for (const [at, bytes] of parts) writeSync(fd, bytes, 0, bytes.length, at);
  } finally {
    closeSync(fd);
  }
}

/** A qcow2 version 3 header with no backing file, encryption or features. */
function qcow2Header(clusterBits: number, virtualSize: number, l1Size: number, l1Offset: number): Buffer {
  const header = Buffer.alloc(QCOW2_V3_HEADER_BYTES + 8);
  header.writeUInt32BE(QCOW2_MAGIC, 0);
  header.writeUInt32BE(3, 4);
  header.writeUInt32BE(clusterBits, 20);
  header.writeBigUInt64BE(BigInt(virtualSize), 24);
  header.writeUInt32BE(l1Size, 36);
  header.writeBigUInt64BE(BigInt(l1Offset), 40);
  header.writeUInt32BE(4, 96); // refcount order: 16-bit refcounts
  header.writeUInt32BE(QCOW2_V3_HEADER_BYTES, 100);
  return header;
}

/** The L2 entry of a compressed cluster whose deflate data is `length` bytes at `offset`. */
export function compressedEntry(offset: number, length: number, clusterBits: number): bigint {
  const shift = BigInt(62 - (clusterBits - 8));
  const extraSectors = Math.ceil(((offset % 512) + length) / 512) - 1;
  return COMPRESSED | (BigInt(extraSectors) << shift) | BigInt(offset);
}

/** The L1 or L2 entry of a table or data cluster at `offset` (bit 63: used once, as qemu marks it). */
export function dataEntry(offset: number): bigint {
  return BigInt(offset) | (1n << 63n);
}

export interface Qcow2Layout {
  clusterBits: number;
  virtualSize: number;
  /** Where the L1 table is, and its entries: the L2 tables' offsets, 0 for none. */
  l1At: number;
  l1: number[];
  /** The L2 tables: where each is, and its entries. */
  l2: [number, bigint[]][];
  /** Anything else: data clusters, compressed data. */
  data?: [number, Buffer][];
  /** The file's size; the rest of it stays a hole. */
  size: number;
}

/** Writes a qcow2 (version 3) laid out exactly as `layout` says, however wrong that is. */
export function writeQcow2(path: string, layout: Qcow2Layout): void {
  const l1 = Buffer.alloc(layout.l1.length * 8);
  layout.l1.forEach((offset, i) => l1.writeBigUInt64BE(offset === 0 ? 0n : dataEntry(offset), i * 8));
  const tables = layout.l2.map(([at, entries]): [number, Buffer] => {
    const table = Buffer.alloc(entries.length * 8);
    entries.forEach((entry, j) => table.writeBigUInt64BE(entry, j * 8));
    return [at, table];
  });
  writeSparse(path, layout.size, [
    [0, qcow2Header(layout.clusterBits, layout.virtualSize, layout.l1.length, layout.l1At)],
    [layout.l1At, l1],
    ...tables,
    ...(layout.data ?? []),
  ]);
}

/**
 * A qcow2 of `clusters` compressed 2 MiB clusters, each 2 MiB of `fill` bytes deflated to about
 * 2 KiB, laid out as qemu lays them out: header, L1 table, L2 table, then the compressed data.
 * With `shared`, every L2 entry points at one and the same blob (finding 1: about 6 MiB of file,
 * mostly a hole, that once made a probe inflate every cluster at once, 2 MiB each); without,
 * each cluster has a blob of its own, as `qemu-img convert -c` writes a disk full of one byte.
 */
export function qcow2CompressedClusters(
  path: string,
  options: { clusters?: number; shared: boolean; fill?: number },
): void {
  const clusters = options.clusters ?? 2000;
  const clusterBits = 21;
  const cluster = 2 ** clusterBits;
  const blob = deflateRawSync(Buffer.alloc(cluster, options.fill ?? 0), { level: 9 });
  const [l1At, l2At, dataAt] = [cluster, 2 * cluster, 3 * cluster];
  const blobs = options.shared ? 1 : clusters;
  writeQcow2(path, {
    clusterBits,
    virtualSize: clusters * cluster,
    l1At,
    l1: [l2At],
    l2: [
      [
        l2At,
        Array.from({ length: clusters }, (_, i) =>
          compressedEntry(dataAt + (i % blobs) * blob.length, blob.length, clusterBits),
        ),
      ],
    ],
    data: [[dataAt, Buffer.concat(Array.from({ length: blobs }, () => blob))]],
    size: dataAt + blobs * blob.length,
  });
}

/**
 * Finding 2: a 2 MiB qcow2 (mostly a hole) of 64M clusters of 4 KiB (256 GiB), every L1 entry
 * pointing at one L2 table whose entries alternate between a data cluster of its own and
 * nothing: read naively, 64M entries and 32M separate mapped ranges.
 */
export function qcow2SharedL2Table(path: string): void {
  const clusterBits = 12;
  const cluster = 2 ** clusterBits;
  const clusters = 64 * 1024 * 1024;
  const perTable = cluster / 8;
  const l1Size = clusters / perTable;
  const l2At = cluster + l1Size * 8;
  const dataAt = l2At + cluster;
  writeQcow2(path, {
    clusterBits,
    virtualSize: clusters * cluster,
    l1At: cluster,
    l1: Array.from({ length: l1Size }, () => l2At),
    l2: [
      [l2At, Array.from({ length: perTable }, (_, j) => (j % 2 === 0 ? dataEntry(dataAt + (j / 2) * cluster) : 0n))],
    ],
    size: dataAt + (perTable / 2) * cluster,
  });
}

/**
 * A raw deflate stream of `bytes` zeros, made without deflating them all: one fully flushed
 * segment of 64 MiB (independent of what came before), repeated, then an empty final block.
 */
function deflateBomb(bytes: number): Buffer {
  const segmentBytes = 64 * MiB;
  const segment = deflateRawSync(Buffer.alloc(segmentBytes), { level: 9, finishFlush: constants.Z_FULL_FLUSH });
  const segments = Array.from({ length: bytes / segmentBytes }, () => segment);
  return Buffer.concat([...segments, Buffer.from([0x03, 0x00])]);
}

export interface ZipMember {
  name: string;
  method: 0 | 8;
  data: Buffer;
  /** What the directory claims. */
  uncompressedSize: number;
  crc: number;
}

/** The fields a local header and its directory record share, from the method on (in both, the same run of fields). */
function writeEntryFields(record: Buffer, at: number, member: ZipMember, nameLength: number): void {
  record.writeUInt16LE(member.method, at);
  record.writeUInt32LE(member.crc >>> 0, at + 6);
  record.writeUInt32LE(member.data.length, at + 10);
  record.writeUInt32LE(member.uncompressedSize, at + 14);
  record.writeUInt16LE(nameLength, at + 18);
}

/** A zip archive of `members`, written as they are (sizes and CRCs as claimed). */
export function writeZip(path: string, members: ZipMember[]): void {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const m of members) {
    const name = Buffer.from(m.name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    writeEntryFields(local, 8, m, name.length);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    writeEntryFields(central, 10, m, name.length);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, m.data);
    centrals.push(central, name);
    offset += local.length + name.length + m.data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(members.length, 8);
  end.writeUInt16LE(members.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  writeFileSync(path, Buffer.concat([...locals, directory, end]));
}

/**
 * Finding 3: a zip of a small image and a `.meta/image.bmap` that its directory says is 4 KiB
 * but that inflates to `bytes` (2 GiB by default, from about 2 MiB).
 */
export function zipWithBmapBomb(path: string, bytes = 2 * 1024 * MiB): void {
  const image = Buffer.alloc(1 * MiB);
  writeZip(path, [
    { name: 'os.img', method: 0, data: image, uncompressedSize: image.length, crc: crc32(image) },
    { name: '.meta/image.bmap', method: 8, data: deflateBomb(bytes), uncompressedSize: 4 * KiB, crc: 0 },
  ]);
}

/** Finding 4: a bmap whose <ImageSize> is followed by thousands of spaces and never closed. */
export function bmapWithOpenElement(spaces = 4000): string {
  return `<?xml version="1.0" ?>\n<bmap version="2.0">\n<ImageSize>${' '.repeat(spaces)}`;
}

/**
 * Finding 11: an xz stream header followed by `padding` zero bytes, which a reader skipping
 * stream padding four bytes at a time reads 4M times (16 MiB).
 */
export function xzHeaderThenZeros(path: string, padding = 16 * MiB): void {
  const header = Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 0x00, 0x04]);
  const flags = Buffer.alloc(4);
  flags.writeUInt32LE(crc32(header.subarray(6, 8)) >>> 0);
  writeSparse(path, 12 + padding, [[0, Buffer.concat([header, flags])]]);
}

/**
 * Finding 12: a copy of the dmg at `from` whose property list closes an element it never
 * opened (the same length, so the trailer still points at it).
 */
export function dmgWithMalformedPlist(from: string, to: string): void {
  const dmg = readFileSync(from);
  const at = dmg.lastIndexOf('</array>');
  if (at < 0) throw new Error(`${from} has no property list`);
  dmg.write('</dict> ', at, 'latin1');
  writeFileSync(to, dmg);
}
