/**
 * `--shrink` on a FAT16 or FAT32 last partition, copied out of the image into its own file: the
 * filesystem is cut after its last used cluster (plus the margin), without moving any cluster.
 * Only the boot sector's total sector count (and its FAT32 backup copy's) and FAT32's free cluster
 * count change; the FATs keep their size, larger than the fewer clusters need, as the
 * specification allows. Refused with a sentence: a FAT12 (rare as a last partition), a
 * filesystem whose used clusters reach its end, one that would cross a FAT type's cluster
 * boundary (FAT32 needs at least 65,525 clusters), and a FAT32 whose backup boot sector places
 * its FATs or clusters otherwise than the boot sector (it cannot be given the new total, and kept
 * as it is it describes a filesystem running past the cut partition, which fsck.fat offers to
 * restore).
 *
 * Why not Debian's fatresize (libparted's FAT resizer): on a filesystem alone in a file it stops
 * on an assertion; asked for a size FAT32 cannot reach it converts the filesystem to FAT16 without
 * asking under --force-yes, and fsck.fat then finds a lost cluster; and it gives the partition a
 * size of its own choosing. Cutting free clusters touches three sectors that fsck.fat then checks.
 */
import { open } from 'node:fs/promises';
import type { Extent } from '../../common/domain/extents.js';
import { jobError } from '../../common/domain/failure.js';
import { MiB } from '../../common/domain/units.js';
import { findTool, runTool } from '../../node/run-tool.js';
import { fatBootSector, fatFree, type FatBootSector } from '../images/free-space/fat.js';
import { randomAccess } from '../images/free-space/image-reader.js';
import { shrunkSize } from './shrink-size.js';

/** fsck.fat on a filesystem of several GiB. */
const TOOL_TIMEOUT_MS = 30 * 60_000;
/** The types Sluice shrinks, and the fewest clusters each may have (Microsoft's specification): fewer makes it another type. */
const MIN_CLUSTERS = { FAT16: 4085, FAT32: 65525 } as const;
type ShrinkableFat = FatBootSector & { filesystem: keyof typeof MIN_CLUSTERS };
/** Where a boot sector keeps FAT32's FSInfo sector number and its backup boot sector's. */
const FSINFO_FIELD = 0x30;
const BACKUP_FIELD = 0x32;
/**
 * The boot sector's bytes that place the FATs, the root and the clusters, as [start, end): sector
 * and cluster size, reserved sectors, FAT count, root entries; FAT16's FAT size; FAT32's FAT
 * size, flags, version, root cluster, FSInfo and backup sector numbers. A backup copy that agrees
 * with the boot sector in these describes the same filesystem but for its size.
 */
const LAYOUT: readonly (readonly [number, number])[] = [
  [0x0b, 0x13],
  [0x16, 0x18],
  [0x24, 0x34],
];
/** FAT32's FSInfo sector: its signatures, and where the free cluster count and the next-free hint are. */
const FSINFO_LEAD = 0x41615252;
const FSINFO_STRUCT = 0x61417272;
const FSINFO_FREE = 488;
const FSINFO_NEXT = 492;

/** The first 512 bytes of the file `part` and its FAT boot sector, checked to fit `partBytes`; null when it holds none. */
export async function fatHead(part: string, partBytes: number): Promise<{ head: Buffer; boot: FatBootSector } | null> {
  const head = await readAt(part, 0, 512);
  const boot = fatBootSector(head, partBytes);
  return boot === null ? null : { head, boot };
}

/** The boot sector's total sector count, from whichever of its two fields holds it. */
export function totalSectors(head: Buffer): number {
  return head.readUInt16LE(0x13) !== 0 ? head.readUInt16LE(0x13) : head.readUInt32LE(0x20);
}

/** fsck.fat's complaint about the filesystem in `part`, or null when it finds none. */
export async function fatFsckFault(part: string): Promise<string | null> {
  return runTool('fsck.fat', ['-n', part], TOOL_TIMEOUT_MS).then(
    () => null,
    (error: unknown) => String(error).slice(0, 300),
  );
}

/**
 * Shrinks the FAT filesystem in the file `part` (copied out of `file`, `partBytes` long), whose
 * first bytes are `head`, and cuts `part` after it; its new length in bytes, or null when it is
 * already about as small as what it holds. Throws a JobError saying why it cannot be shrunk,
 * before `part` is changed.
 */
export async function shrinkFat(
  part: string,
  { head, boot }: { head: Buffer; boot: FatBootSector },
  partBytes: number,
  file: string,
): Promise<number | null> {
  if (!shrinkable(boot))
    throw notShrunk(file, `its filesystem is ${boot.filesystem}, and Sluice shrinks only FAT16 and FAT32`);
  if ((await findTool('fsck.fat')) === null)
    throw notShrunk(file, 'shrinking a FAT needs fsck.fat (dosfstools) to check it, which is not installed');
  const fault = await fatFsckFault(part);
  if (fault !== null)
    throw notShrunk(file, `fsck.fat finds errors in its ${boot.filesystem} (${fault})`, 'source-corrupt');
  const free = await freeRuns(part, boot);
  const bytes = newSize(boot, free, Math.min(totalSectors(head) * boot.bytesPerSector, partBytes), file);
  if (bytes === null) return null;
  const sectors = bytes / boot.bytesPerSector;
  const backup = await patchedBackup(part, head, boot, sectors, file);
  const clusters = Math.floor((bytes - boot.dataOffset) / boot.clusterBytes);
  const boots = [{ at: 0, bytes: withTotal(head, sectors) }, ...(backup === null ? [] : [backup])];
  await rewriteBootSectors(part, boots, head, boot, clusters, freeClusters(boot, free, clusters));
  const handle = await open(part, 'r+');
  await handle.truncate(bytes).finally(() => handle.close());
  const after = await fatFsckFault(part);
  if (after !== null) throw notShrunk(file, `fsck.fat finds errors in its shrunk ${boot.filesystem} (${after})`);
  return bytes;
}

/** Whether `boot` is of a type Sluice shrinks. */
function shrinkable(boot: FatBootSector): boot is ShrinkableFat {
  return boot.filesystem in MIN_CLUSTERS;
}

/** The refusal: the backup is kept as it is, and why. */
function notShrunk(file: string, why: string, code: 'unsupported-format' | 'source-corrupt' = 'unsupported-format') {
  return jobError(code, `The last partition of ${file} was not shrunk: ${why}; the backup is kept as it is.`);
}

/** The free clusters of the FAT in `part`, as byte ranges of it, in order. */
async function freeRuns(part: string, boot: FatBootSector): Promise<Extent[]> {
  const handle = await open(part, 'r');
  try {
    const runs: Extent[] = [];
    const read = randomAccess(async (position, count) => {
      const bytes = Buffer.alloc(count);
      const { bytesRead } = await handle.read(bytes, 0, count, position);
      return bytes.subarray(0, bytesRead);
    });
    await fatFree(read, 0, boot, (extents) => runs.push(...extents));
    return runs;
  } finally {
    await handle.close();
  }
}

/**
 * The filesystem's new length: its last used cluster's end plus the margin, in whole MiB, and no
 * fewer clusters than its type needs. Null when that is no smaller than `current`; throws when
 * its used clusters or its type keep it from being cut at all.
 */
function newSize(boot: ShrinkableFat, free: readonly Extent[], current: number, file: string): number | null {
  const dataEnd = boot.dataOffset + boot.clusters * boot.clusterBytes;
  const last = free.at(-1);
  const usedEnd = last !== undefined && last[0] + last[1] === dataEnd ? last[0] : dataEnd;
  const floor = boot.dataOffset + MIN_CLUSTERS[boot.filesystem] * boot.clusterBytes;
  const wanted = shrunkSize(usedEnd);
  const bytes = Math.max(wanted, Math.ceil(floor / MiB) * MiB);
  if (bytes < current) return bytes;
  if (wanted < current)
    throw notShrunk(
      file,
      `its ${boot.filesystem} cannot be smaller than ${Math.ceil(floor / MiB)} MiB without becoming another FAT type (${boot.filesystem} needs at least ${MIN_CLUSTERS[boot.filesystem]} clusters of ${boot.clusterBytes} bytes)`,
    );
  // Were its used clusters packed at the start, it would shrink: they lie too near its end.
  const usedBytes = dataEnd - freeClusters(boot, free, boot.clusters) * boot.clusterBytes;
  if (Math.max(shrunkSize(usedBytes), Math.ceil(floor / MiB) * MiB) < current)
    throw notShrunk(
      file,
      `its ${boot.filesystem} uses clusters up to ${Math.ceil(usedEnd / MiB)} MiB of its ${Math.floor(current / MiB)} MiB, and Sluice shrinks a FAT only by cutting the free clusters after the last used one, moving none`,
    );
  return null;
}

/** Free clusters among the first `clusters`, counted from the free byte ranges. */
function freeClusters(boot: FatBootSector, free: readonly Extent[], clusters: number): number {
  const end = boot.dataOffset + clusters * boot.clusterBytes;
  const bytes = free.reduce((sum, [start, length]) => sum + Math.max(0, Math.min(start + length, end) - start), 0);
  return bytes / boot.clusterBytes;
}

/** A boot sector (or its copy) with the total sector count `sectors`, in the field it keeps it in. */
function withTotal(sector: Buffer, sectors: number): Buffer {
  const edited = Buffer.from(sector);
  if (edited.readUInt16LE(0x13) !== 0) edited.writeUInt16LE(sectors, 0x13);
  else edited.writeUInt32LE(sectors, 0x20);
  return edited;
}

/** The sector number the FAT32 boot sector `head` keeps at `field`, when it lies in the reserved area; else null. */
function reservedSector(head: Buffer, boot: FatBootSector, field: number): number | null {
  const n = head.readUInt16LE(field);
  return n > 0 && n < boot.reservedSectors ? n : null;
}

/**
 * FAT32's backup boot sector with the new total `sectors` (its other bytes, such as a serial
 * number of its own, kept), and its byte offset; null when there is none. Throws, before anything is written, when the copy places the
 * FATs or clusters otherwise than the boot sector, or keeps its total in the other field.
 */
async function patchedBackup(
  part: string,
  head: Buffer,
  boot: FatBootSector,
  sectors: number,
  file: string,
): Promise<{ at: number; bytes: Buffer } | null> {
  const backup = boot.filesystem === 'FAT32' ? reservedSector(head, boot, BACKUP_FIELD) : null;
  if (backup === null) return null;
  const at = backup * boot.bytesPerSector;
  const copy = await readAt(part, at, 512);
  const same = ([start, end]: readonly [number, number]) => copy.subarray(start, end).equals(head.subarray(start, end));
  if (LAYOUT.every(same) && (copy.readUInt16LE(0x13) === 0) === (head.readUInt16LE(0x13) === 0))
    return { at, bytes: withTotal(copy, sectors) };
  throw notShrunk(
    file,
    `its FAT32's backup boot sector (sector ${backup}) places the FATs or clusters otherwise than its boot sector, so it cannot be given the new size, and kept as it is a tool restoring from it (fsck.fat offers to) would make a filesystem that runs past the cut partition`,
  );
}

/**
 * The boot sector and FAT32's backup copy, each with its new total (`boots`), and FAT32's FSInfo
 * sectors with the new free count and a next-free hint inside the filesystem's `clusters`.
 */
async function rewriteBootSectors(
  part: string,
  boots: readonly { at: number; bytes: Buffer }[],
  head: Buffer,
  boot: FatBootSector,
  clusters: number,
  free: number,
): Promise<void> {
  const handle = await open(part, 'r+');
  try {
    for (const { at, bytes } of boots) await handle.write(bytes, 0, 512, at);
    const fsInfo = boot.filesystem === 'FAT32' ? reservedSector(head, boot, FSINFO_FIELD) : null;
    if (fsInfo === null) return;
    const backup = reservedSector(head, boot, BACKUP_FIELD);
    const copies = [fsInfo, ...(backup === null ? [] : [backup + fsInfo])].filter((n) => n < boot.reservedSectors);
    for (const n of copies) await rewriteFsInfo(handle, n * boot.bytesPerSector, free, clusters);
  } finally {
    await handle.close();
  }
}

/** The FSInfo sector at byte `at`, when its signatures say it is one, with the new free count and hint. */
async function rewriteFsInfo(
  handle: Awaited<ReturnType<typeof open>>,
  at: number,
  free: number,
  clusters: number,
): Promise<void> {
  const info = Buffer.alloc(512);
  const { bytesRead } = await handle.read(info, 0, 512, at);
  if (bytesRead < 512 || info.readUInt32LE(0) !== FSINFO_LEAD || info.readUInt32LE(484) !== FSINFO_STRUCT) return;
  info.writeUInt32LE(free, FSINFO_FREE);
  const next = info.readUInt32LE(FSINFO_NEXT);
  if (next !== 0xffffffff && next >= clusters + 2) info.writeUInt32LE(0xffffffff, FSINFO_NEXT);
  await handle.write(info, 0, 512, at);
}

/** `length` bytes of `file` at `offset`, zeros past its end. */
async function readAt(file: string, offset: number, length: number): Promise<Buffer> {
  const handle = await open(file, 'r');
  try {
    const bytes = Buffer.alloc(length);
    await handle.read(bytes, 0, length, offset);
    return bytes;
  } finally {
    await handle.close();
  }
}
