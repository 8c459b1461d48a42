/**
 * `--shrink`: makes a raw backup small enough to restore onto a smaller card. The last partition's
 * filesystem is shrunk to its used size and a margin: ext2/3/4 with e2fsprogs, FAT by cutting the
 * free clusters after its last used one (shrink-fat.ts). The partition's end is moved to the
 * filesystem's, and the file is cut after it (after a GPT's backup header, moved there).
 * Everything runs as the user, on the user's own file, with the system's tools: sfdisk reads and
 * edits the partition table, e2fsck and fsck.fat check, resize2fs shrinks. Those are Linux's, so
 * shrinking is Linux-only.
 *
 * resize2fs cuts a regular file to the filesystem's new end, so it is given the partition alone,
 * copied out of the image (holes stay holes), and the result is copied back over a punched range.
 */
import { rm, truncate } from 'node:fs/promises';
import { jobError } from '../../common/domain/failure.js';
import { MiB } from '../../common/domain/units.js';
import { runTool } from '../../node/run-tool.js';
import { fatFsckFault, fatHead, shrinkFat, totalSectors } from './shrink-fat.js';
import { shrunkSize } from './shrink-size.js';

/** What shrinking did: the file's length before and after, and what reading the result back found. */
export interface Shrunk {
  before: number;
  after: number;
  /** Null: the shrunk file read back as it should be (shrinkCheck); else what is wrong with it. */
  fault: string | null;
}

/** A GPT's backup table and header at the end of the disk: 33 sectors, kept in a whole MiB. */
const GPT_TAIL = MiB;
/** e2fsck and resize2fs on a filesystem of several GiB. */
const TOOL_TIMEOUT_MS = 30 * 60_000;

interface SfdiskPartition {
  node: string;
  start: number;
  size: number;
  type: string;
}
interface SfdiskTable {
  label: string;
  sectorsize?: number;
  partitions?: SfdiskPartition[];
}

async function partitionTable(file: string): Promise<SfdiskTable> {
  const json = await runTool('sfdisk', ['--json', file]).catch(() => null);
  const table = json === null ? null : (JSON.parse(json) as { partitiontable?: SfdiskTable }).partitiontable;
  if (table?.partitions === undefined || table.partitions.length === 0)
    throw jobError('unsupported-format', `${file} has no partition table sfdisk reads, so it cannot be shrunk.`);
  return table;
}

/** A filesystem's block size and its estimated minimum size in blocks (resize2fs -P). */
async function extFacts(part: string, file: string): Promise<{ blockSize: number; blocks: number; minimum: number }> {
  const header = await runTool('dumpe2fs', ['-h', part]).catch(() => null);
  const number = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)$`, 'm').exec(header ?? '')?.[1] ?? NaN);
  const blockSize = number('Block size');
  const blocks = number('Block count');
  if (header === null || !Number.isSafeInteger(blockSize) || !Number.isSafeInteger(blocks))
    throw jobError(
      'unsupported-format',
      `The last partition of ${file} holds no ext2/3/4 or FAT filesystem; --shrink shrinks only those, so the backup is kept as it is.`,
    );
  await runTool('e2fsck', ['-f', '-n', part], TOOL_TIMEOUT_MS).catch((error: unknown) => {
    throw jobError(
      'source-corrupt',
      `The last partition's filesystem in ${file} has errors (e2fsck: ${String(error).slice(0, 300)}), so it was not shrunk; the backup is kept as it is.`,
    );
  });
  const said = /minimum size of the filesystem: (\d+)/.exec(await runTool('resize2fs', ['-P', part], TOOL_TIMEOUT_MS));
  return { blockSize, blocks, minimum: Number(said?.[1] ?? blocks) };
}

/** What the shrunk filesystem must read back as: its kind and its size in its own blocks (FAT: sectors). */
export interface ShrunkFilesystem {
  kind: 'ext' | 'fat';
  blocks: number;
}

/**
 * Shrinks the raw backup `file` (see the module comment); null when its last filesystem is already
 * as small as its used size and the margin. Throws a JobError that says why it cannot be shrunk;
 * the file is then as it was, unless a tool failed half-way, which the error says.
 */
export async function shrinkBackup(file: string, length: number): Promise<Shrunk | null> {
  const table = await partitionTable(file);
  const sector = table.sectorsize ?? 512;
  const partitions = table.partitions ?? [];
  const last = partitions.reduce((a, b) => (b.start + b.size > a.start + a.size ? b : a));
  const offset = last.start * sector;
  const part = `${file}.shrinking`;
  try {
    await copyOut(file, offset, last.size * sector, part);
    const shrunk = await shrinkPart(part, last.size * sector, file);
    if (shrunk === null) return null;
    await putBack(file, part, offset, last.size * sector);
    const after = offset + shrunk.bytes + (table.label === 'gpt' ? GPT_TAIL : 0);
    await rewriteTable(file, last, shrunk.bytes / sector, after);
    const expected = partitions.map((p) => (p === last ? { ...p, size: shrunk.bytes / sector } : p));
    return { before: length, after, fault: await shrinkCheck(file, { partitions: expected, ...shrunk.fs }) };
  } finally {
    await rm(part, { force: true });
  }
}

/** The filesystem in the file `part` shrunk, FAT or ext2/3/4, and `part` cut after it; null when it is small already. */
async function shrinkPart(
  part: string,
  partBytes: number,
  file: string,
): Promise<{ bytes: number; fs: ShrunkFilesystem } | null> {
  const fat = await fatHead(part, partBytes);
  if (fat !== null) {
    const bytes = await shrinkFat(part, fat, partBytes, file);
    return bytes === null ? null : { bytes, fs: { kind: 'fat', blocks: bytes / fat.boot.bytesPerSector } };
  }
  const fs = await extFacts(part, file);
  const bytes = shrunkSize(fs.minimum * fs.blockSize);
  const blocks = bytes / fs.blockSize;
  if (blocks >= fs.blocks) return null;
  await runTool('resize2fs', ['-f', part, String(blocks)], TOOL_TIMEOUT_MS);
  await runTool('e2fsck', ['-f', '-n', part], TOOL_TIMEOUT_MS);
  return { bytes, fs: { kind: 'ext', blocks } };
}

/**
 * The shrunk file read back from the disk (synced, its cached pages dropped): the partition table
 * sfdisk reads must be the one intended, and the last partition's filesystem, copied out of the
 * file, must have the size it was given and pass `e2fsck -f -n` or `fsck.fat -n`. Null when it
 * does; else what is wrong, in a sentence.
 */
export async function shrinkCheck(
  file: string,
  expected: { partitions: readonly SfdiskPartition[] } & ShrunkFilesystem,
): Promise<string | null> {
  await runTool('sync', [file]);
  await runTool('dd', [`if=${file}`, 'iflag=nocache', 'count=0', 'status=none']);
  const table = await partitionTable(file).catch(() => null);
  const layout = (partitions: readonly SfdiskPartition[]) =>
    partitions.map((p) => `${p.start}+${p.size}:${p.type.toLowerCase()}`).join(' ');
  if (table === null || layout(table.partitions ?? []) !== layout(expected.partitions))
    return `its partition table reads back as ${table === null ? 'none' : layout(table.partitions ?? [])}, not ${layout(expected.partitions)}`;
  const last = expected.partitions.reduce((a, b) => (b.start + b.size > a.start + a.size ? b : a));
  const sector = table.sectorsize ?? 512;
  const part = `${file}.checking`;
  try {
    await copyOut(file, last.start * sector, last.size * sector, part);
    return await (expected.kind === 'fat' ? fatFault : extFault)(part, last.size * sector, expected.blocks);
  } finally {
    await rm(part, { force: true });
  }
}

/** What is wrong with the ext2/3/4 filesystem in `part`, expected to have `expected` blocks. */
async function extFault(part: string, _partBytes: number, expected: number): Promise<string | null> {
  const header = await runTool('dumpe2fs', ['-h', part]).catch(() => null);
  if (header === null) return 'no ext2/3/4 filesystem reads back in its last partition';
  const blocks = Number(/^Block count:\s+(\d+)$/m.exec(header)?.[1]);
  if (blocks !== expected) return `its last filesystem reads back with ${blocks} blocks, not ${expected}`;
  const fsck = await runTool('e2fsck', ['-f', '-n', part], TOOL_TIMEOUT_MS).then(
    () => null,
    (error: unknown) => String(error).slice(0, 300),
  );
  return fsck === null ? null : `e2fsck finds errors in its last filesystem (${fsck})`;
}

/** What is wrong with the FAT filesystem in `part`, expected to have `expected` sectors. */
async function fatFault(part: string, partBytes: number, expected: number): Promise<string | null> {
  const fat = await fatHead(part, partBytes);
  if (fat === null) return 'no FAT filesystem reads back in its last partition';
  const sectors = totalSectors(fat.head);
  if (sectors !== expected) return `its last filesystem reads back with ${sectors} sectors, not ${expected}`;
  const fsck = await fatFsckFault(part);
  return fsck === null ? null : `fsck.fat finds errors in its last filesystem (${fsck})`;
}

/** `size` bytes of `file` at `offset` copied into the file `part` (holes stay holes), leaving no cached pages of `file`. */
function copyOut(file: string, offset: number, size: number, part: string): Promise<string> {
  return runTool(
    'dd',
    [
      `if=${file}`,
      `of=${part}`,
      'bs=1M',
      'iflag=skip_bytes,count_bytes,nocache',
      `skip=${offset}`,
      `count=${size}`,
      'conv=sparse',
      'status=none',
    ],
    TOOL_TIMEOUT_MS,
  );
}

/** The shrunk partition over its old place: the old bytes first punched out, so no stale block stays under a hole. */
async function putBack(file: string, part: string, offset: number, size: number): Promise<void> {
  await runTool('fallocate', ['--punch-hole', '--offset', String(offset), '--length', String(size), file]);
  await runTool(
    'dd',
    [`if=${part}`, `of=${file}`, 'bs=1M', 'oflag=seek_bytes', `seek=${offset}`, 'conv=notrunc,sparse', 'status=none'],
    TOOL_TIMEOUT_MS,
  );
}

/**
 * The table again, with `last` ending after `sectors`, on the file cut to `length`: sfdisk's own
 * dump of it, written back whole, so that a GPT gets its backup header at the new end and keeps
 * its disk and partition GUIDs (a system that mounts its root by PARTUUID finds it still). A GPT
 * whose header names sectors past the file's end is one libfdisk no longer reads, so the dump is
 * taken first.
 */
async function rewriteTable(file: string, last: SfdiskPartition, sectors: number, length: number): Promise<void> {
  const dump = await runTool('sfdisk', ['--dump', file]);
  const script = dump
    .split('\n')
    // The last usable sector is the file's new end, as sfdisk finds it.
    .filter((line) => !line.startsWith('last-lba:'))
    .map((line) => (line.startsWith(`${last.node} :`) ? line.replace(/size=\s*\d+/, `size=${sectors}`) : line))
    .join('\n');
  await truncate(file, length);
  await runTool('sfdisk', ['--no-reread', '--no-tell-kernel', '-q', file], TOOL_TIMEOUT_MS, script);
}
