/**
 * QEMU's qcow2 disk images (versions 2 and 3): the header, and where each guest cluster's data is
 * in the file. Read from the header and the L1/L2 tables only; the data is read by the decoder
 * (decode/qcow2-decode.ts). Specification: qemu/docs/interop/qcow2.txt.
 */
import { jobError, type JobError } from '../../../common/domain/failure.js';
import { HostClusters } from './qcow2-host-clusters.js';
import type { ReadAt } from '../../../node/read-at.js';

const MAGIC = 0x514649fb; // "QFI\xfb"
const HEADER_V2_BYTES = 72;
/** Version 3 adds the feature bits and the header's own length (the spec's minimum). */
const HEADER_V3_BYTES = 104;
/** Incompatible feature bits (v3) Sluice understands; any other one it must refuse. */
const DIRTY = 1n << 0n;
const CORRUPT = 1n << 1n;
const EXTERNAL_DATA_FILE = 1n << 2n;
const COMPRESSION_TYPE = 1n << 3n;
const EXTENDED_L2 = 1n << 4n;
const OFFSET_MASK = 0x00fffffffffffe00n;
const COMPRESSED = 1n << 62n;
/** v3: the cluster reads as zeros whatever its offset says. */
const ZERO = 1n;
/** Cluster sizes qemu allows: 512 B to 2 MiB. */
const MIN_CLUSTER_BITS = 9;
const MAX_CLUSTER_BITS = 21;
/** qemu refuses an active L1 table larger than this (QCOW_MAX_L1_SIZE), so Sluice does too. */
const MAX_L1_BYTES = 32 * 1024 * 1024;

/** What one guest cluster is. */
export type ClusterKind = 'unallocated' | 'zero' | 'data' | 'compressed';

export interface Qcow2Image {
  version: number;
  clusterBits: number;
  clusterSize: number;
  /** The guest disk's size in bytes: what gets written. */
  virtualSize: number;
  /** Guest clusters (the last may be partial). */
  clusters: number;
  compression: 'zlib' | 'zstd';
  /**
   * Each L1 entry's L2 table, null where it has none (its clusterSize / 8 guest clusters are
   * unallocated). Every table is a host cluster of its own, so together they are never larger
   * than the file: unallocated guest clusters cost nothing.
   */
  l2Tables: (Buffer | null)[];
}

export function clusterKind(entry: bigint, version: number): ClusterKind {
  if ((entry & COMPRESSED) !== 0n) return 'compressed';
  if (version >= 3 && (entry & ZERO) !== 0n) return 'zero';
  return (entry & OFFSET_MASK) === 0n ? 'unallocated' : 'data';
}

/** Where a data cluster is in the file. */
export function dataOffset(entry: bigint): number {
  return Number(entry & OFFSET_MASK);
}

/** Where a compressed cluster's bytes are in the file, and how many to read (the last sector may hold less). */
export function compressedExtent(entry: bigint, clusterBits: number): { offset: number; length: number } {
  const shift = BigInt(62 - (clusterBits - 8));
  const offset = Number(entry & ((1n << shift) - 1n));
  const sectors = Number((entry >> shift) & ((1n << BigInt(clusterBits - 8)) - 1n)) + 1;
  return { offset, length: sectors * 512 - (offset % 512) };
}

function refuse(name: string, why: string): JobError {
  return jobError('unsupported-format', `${name} is a qcow2 image ${why}`);
}

/**
 * Reads a qcow2 image's header and cluster tables. Refuses what cannot be written on its own or
 * correctly: a backing file (the image holds only its differences from another), encryption,
 * an external data file, extended L2 entries, and an image qemu marked corrupt.
 */
export async function readQcow2(readAt: ReadAt, fileSize: number, name: string): Promise<Qcow2Image> {
  const header = await readAt(0, 112);
  if (header.length < HEADER_V2_BYTES || header.readUInt32BE(0) !== MAGIC)
    throw jobError('source-corrupt', `${name} has no qcow2 header.`);
  const version = header.readUInt32BE(4);
  if (version !== 2 && version !== 3) throw refuse(name, `of version ${version}; Sluice reads versions 2 and 3.`);
  const backingOffset = Number(header.readBigUInt64BE(8));
  if (backingOffset !== 0) {
    const backingSize = Math.min(header.readUInt32BE(16), 1023);
    const backing = (await readAt(backingOffset, backingSize)).toString('utf8');
    throw refuse(
      name,
      `that depends on a backing file (${backing}): it holds only the changes to that image. Make a standalone copy first: qemu-img convert -O qcow2 ${name} standalone.qcow2`,
    );
  }
  const clusterBits = header.readUInt32BE(20);
  if (clusterBits < MIN_CLUSTER_BITS || clusterBits > MAX_CLUSTER_BITS)
    throw jobError('source-corrupt', `${name}: its qcow2 cluster size (2^${clusterBits}) is impossible.`);
  if (header.readUInt32BE(32) !== 0) throw refuse(name, 'that is encrypted. Decrypt it with qemu-img convert first.');
  let compression: Qcow2Image['compression'] = 'zlib';
  if (version === 3) {
    if (header.length < HEADER_V3_BYTES)
      throw jobError(
        'source-corrupt',
        `${name} has a qcow2 version 3 header cut short (${header.length} of ${HEADER_V3_BYTES} bytes).`,
      );
    const incompatible = header.readBigUInt64BE(72);
    if ((incompatible & CORRUPT) !== 0n)
      throw jobError('source-corrupt', `${name} is marked corrupt by qemu. Check it with qemu-img check ${name}.`);
    if ((incompatible & EXTERNAL_DATA_FILE) !== 0n) throw refuse(name, 'whose data is in an external file.');
    if ((incompatible & EXTENDED_L2) !== 0n)
      throw refuse(name, 'with extended L2 entries (subclusters). Convert it with qemu-img convert -O qcow2 first.');
    const unknown = incompatible & ~(DIRTY | CORRUPT | EXTERNAL_DATA_FILE | COMPRESSION_TYPE | EXTENDED_L2);
    if (unknown !== 0n) throw refuse(name, `with features this version does not know (0x${unknown.toString(16)}).`);
    const headerLength = header.readUInt32BE(100);
    if ((incompatible & COMPRESSION_TYPE) !== 0n && headerLength > 104) {
      const type = header[104];
      if (type === undefined)
        throw jobError('source-corrupt', `${name} has a qcow2 header cut short before its compression type.`);
      if (type === 1) compression = 'zstd';
      else if (type !== 0) throw refuse(name, `compressed with method ${type}.`);
    }
  }
  const clusterSize = 2 ** clusterBits;
  const declaredSize = header.readBigUInt64BE(24);
  if (declaredSize > BigInt(Number.MAX_SAFE_INTEGER))
    throw jobError(
      'source-corrupt',
      `${name}: its qcow2 header claims a disk of ${declaredSize} bytes, which is impossible.`,
    );
  const virtualSize = Number(declaredSize);
  const clusters = Math.ceil(virtualSize / clusterSize);
  const perTable = clusterSize / 8;
  const tables = Math.ceil(clusters / perTable);
  const l1Size = header.readUInt32BE(36);
  const l1Offset = Number(header.readBigUInt64BE(40));
  if (l1Size < tables || l1Offset + l1Size * 8 > fileSize)
    throw jobError('source-corrupt', `${name}: its qcow2 L1 table is truncated or lies outside the file.`);
  if (l1Size * 8 > MAX_L1_BYTES)
    throw jobError(
      'source-corrupt',
      `${name}: its qcow2 L1 table (${l1Size * 8} bytes) is larger than qemu allows (${MAX_L1_BYTES}).`,
    );
  const host = new HostClusters(fileSize, clusterBits, name);
  host.claim(0, clusterSize, 'the header');
  host.claim(l1Offset, l1Size * 8, 'the L1 table');
  // Only the entries that map the guest disk: any after them describe snapshots' VM state.
  const l1 = await readAt(l1Offset, tables * 8);
  const l2Tables: (Buffer | null)[] = [];
  for (let i = 0; i < tables; i++) {
    const l2Offset = Number(l1.readBigUInt64BE(i * 8) & OFFSET_MASK);
    if (l2Offset === 0) {
      l2Tables.push(null);
      continue;
    }
    if (l2Offset + clusterSize > fileSize)
      throw jobError(
        'source-truncated',
        `${name}: an L2 table lies past the end of the file (byte ${l2Offset}); it is truncated.`,
      );
    host.claim(l2Offset, clusterSize, `the L2 table of L1 entry ${i}`);
    const l2 = await readAt(l2Offset, clusterSize);
    l2Tables.push(l2);
    const count = Math.min(perTable, clusters - i * perTable);
    for (let j = 0; j < count; j++) {
      const c = i * perTable + j;
      const entry = l2.readBigUInt64BE(j * 8);
      const kind = clusterKind(entry, version);
      if (kind === 'unallocated' || kind === 'zero') continue;
      if (kind === 'compressed') host.compressed(compressedExtent(entry, clusterBits), c);
      else host.claim(dataOffset(entry), clusterSize, `the data of guest cluster ${c}`);
    }
  }
  host.checkCompressed();
  return { version, clusterBits, clusterSize, virtualSize, clusters, compression, l2Tables };
}

/** The L2 entry of guest cluster `c`: 0 (unallocated) where its L1 entry has no table. */
export function l2Entry(image: Qcow2Image, c: number): bigint {
  const perTable = image.clusterSize / 8;
  const table = image.l2Tables[Math.floor(c / perTable)] ?? null;
  return table === null ? 0n : table.readBigUInt64BE((c % perTable) * 8);
}
