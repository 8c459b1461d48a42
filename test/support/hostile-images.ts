/** Images made to hurt whatever reads them, for tests that show they do not. */
import { writeFileSync } from 'node:fs';

/**
 * A qcow2 image of 8 MiB that claims a 128 TiB disk of 2 MiB clusters (64 Mi clusters, as many as
 * qcow2.ts maps) whose 256 L1 entries all point to one L2 table, in which every other cluster is
 * allocated: a probe that believes it holds a table entry per cluster and a range per allocated
 * one, hundreds of megabytes for a file that small.
 */
export function sharedL2Qcow2(path: string): void {
  const clusterBits = 21;
  const cluster = 2 ** clusterBits;
  const clusters = 64 * 1024 * 1024;
  const l2Entries = cluster / 8;
  const l1Entries = clusters / l2Entries;
  const [l1At, l2At, dataAt] = [cluster, 2 * cluster, 3 * cluster];
  const file = Buffer.alloc(4 * cluster);
  file.writeUInt32BE(0x514649fb, 0);
  file.writeUInt32BE(3, 4);
  file.writeUInt32BE(clusterBits, 20);
  file.writeBigUInt64BE(BigInt(clusters) * BigInt(cluster), 24);
  file.writeUInt32BE(l1Entries, 36);
  file.writeBigUInt64BE(BigInt(l1At), 40);
  file.writeUInt32BE(4, 96); // refcount order
  file.writeUInt32BE(104, 100); // header length
  const copied = 1n << 63n;
  for (let i = 0; i < l1Entries; i++) file.writeBigUInt64BE(BigInt(l2At) | copied, l1At + i * 8);
  for (let j = 0; j < l2Entries; j += 2) file.writeBigUInt64BE(BigInt(dataAt) | copied, l2At + j * 8);
  writeFileSync(path, file);
}
