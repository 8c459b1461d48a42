/**
 * Loop devices for tests: the only block devices any test may write.
 *
 * Every device a test writes is created here, over a backing file this process made, and
 * assertOwnedLoop() checks all three facts (a /dev/loopN path, registered here, and the kernel's
 * own record of its backing file) before any test code hands the path to something that writes.
 * A mistake anywhere else then fails a test instead of wiping this machine's disk.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomFillSync } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

export const isRoot = process.getuid?.() === 0;

/** Loop path → the backing file this process created for it. */
const owned = new Map<string, string>();
/** The inode of each owned loop's backing file: what still names it once the file is deleted. */
const ownedInodes = new Map<string, number>();
const tempDirs: string[] = [];
const mounts: string[] = [];

export interface LoopDevice {
  /** /dev/loopN */
  path: string;
  /** The file behind it; reading it shows what the device holds, independently of Sluice. */
  backing: string;
  size: number;
}

export interface LoopOptions {
  size: number;
  /**
   * What the backing file starts with: random bytes (default) make "untouched" checks meaningful;
   * 'allocated' is zeros with every page already allocated, so the first write to the device costs
   * what later writes cost (benchmarks).
   */
  fill?: 'random' | 'zero' | 'sparse' | 'allocated';
  readOnly?: boolean;
  /** Scan for partitions (losetup -P). */
  partitions?: boolean;
  /** Directory for the backing file; defaults to a fresh directory on /dev/shm. */
  dir?: string;
}

/**
 * A fresh directory for a test's files, removed by cleanupLoops: in memory on /dev/shm where there
 * is one (Linux), else in the system's temporary directory; or under `parent`, for files too big
 * for memory.
 */
export function scratchDir(parent = existsSync('/dev/shm') ? '/dev/shm' : tmpdir()): string {
  const dir = mkdtempSync(join(parent, 'sluice-test-'));
  tempDirs.push(dir);
  return dir;
}

/** Writes `size` bytes of random data to `path`, 1 MiB at a time. */
export function writeRandomFile(path: string, size: number): void {
  const fd = openSync(path, 'w');
  const block = Buffer.alloc(1 << 20);
  try {
    for (let done = 0; done < size;) {
      const n = Math.min(block.length, size - done);
      randomFillSync(block, 0, n);
      writeSync(fd, block, 0, n);
      done += n;
    }
  } finally {
    closeSync(fd);
  }
}

export function createLoop(options: LoopOptions): LoopDevice {
  const dir = options.dir ?? scratchDir();
  const backing = join(dir, `disk-${owned.size}.img`);
  if (options.fill === 'sparse' || options.fill === 'zero') {
    execFileSync('truncate', ['-s', String(options.size), backing]);
  } else if (options.fill === 'allocated') {
    execFileSync('fallocate', ['--length', String(options.size), backing]);
  } else {
    writeRandomFile(backing, options.size);
  }
  return attachLoop(backing, options);
}

/** Attaches an existing backing file (one this test made) as a new loop device. */
export function attachLoop(backing: string, options: Pick<LoopOptions, 'readOnly' | 'partitions'> = {}): LoopDevice {
  const args = [
    '--find',
    '--show',
    ...(options.readOnly ? ['--read-only'] : []),
    ...(options.partitions ? ['--partscan'] : []),
    backing,
  ];
  const path = execFileSync('losetup', args, { encoding: 'utf8' }).trim();
  owned.set(path, backing);
  ownedInodes.set(path, statSync(backing).ino);
  // On this kernel the partition scan that --partscan asks for adds no partitions; partx adds
  // them through BLKPG, which works everywhere.
  if (options.partitions) execFileSync('partx', ['--update', path]);
  const size = Number(execFileSync('blockdev', ['--getsize64', path], { encoding: 'utf8' }).trim());
  return { path, backing, size };
}

/**
 * A loop device over `size` random bytes partitioned by `sfdiskScript`, once its first partition
 * node (…p1) exists: the kernel adds partition nodes shortly after the table is scanned.
 */
export async function partitionedLoop(sfdiskScript: string, size = 16 * 1024 * 1024): Promise<LoopDevice> {
  const backing = join(scratchDir(), 'partitioned.img');
  writeRandomFile(backing, size);
  execFileSync('sfdisk', ['--quiet', backing], { input: sfdiskScript });
  const loop = attachLoop(backing, { partitions: true });
  await waitForPath(`${loop.path}p1`);
  return loop;
}

/** Waits up to 5 s for a device node to appear: partition nodes follow the kernel's scan. */
export async function waitForPath(path: string): Promise<void> {
  for (let tries = 0; tries < 50 && !existsSync(path); tries++) await new Promise((r) => setTimeout(r, 100));
  if (!existsSync(path)) throw new Error(`${path} did not appear`);
}

/** A SHA-256 of a whole file: a backing file before and after, to prove nothing was written. */
export function digestFile(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** Throws unless `path` is a loop device this process created, over the backing file it created. */
export function assertOwnedLoop(path: string): void {
  if (!/^\/dev\/loop\d+$/.test(path)) throw new Error(`refusing to let a test touch ${path}: not a loop device`);
  const backing = owned.get(path);
  if (backing === undefined) throw new Error(`refusing to let a test touch ${path}: this test did not create it`);
  const actual = backFile(path).file;
  if (actual !== backing)
    throw new Error(`refusing to let a test touch ${path}: it is backed by ${actual ?? 'nothing'}, not ${backing}`);
}

/** The file behind loop device `path`, as the kernel names it ("… (deleted)" once it was removed), and its inode. */
function backFile(path: string): { file: string | undefined; inode: number | undefined } {
  const listing = JSON.parse(
    execFileSync('losetup', ['--json', '--list', '--output', 'NAME,BACK-FILE,BACK-INO', path], { encoding: 'utf8' }),
  ) as { loopdevices: { 'back-file': string; 'back-ino': number }[] };
  return { file: listing.loopdevices[0]?.['back-file'], inode: listing.loopdevices[0]?.['back-ino'] };
}

export function detachLoop(path: string): void {
  assertOwnedLoop(path);
  execFileSync('losetup', ['--detach', path]);
  owned.delete(path);
  ownedInodes.delete(path);
}

/** Mounts a small tmpfs of `bytes` for backing files that run out of space mid-write. */
export function smallTmpfs(bytes: number): string {
  const dir = mkdtempSync('/tmp/sluice-test-tmpfs-');
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir]);
  mounts.push(dir);
  tempDirs.push(dir);
  return dir;
}

/** Mounts `device` (which the test created) at a fresh directory and returns it. */
export function mountDevice(device: string, options: string[] = []): string {
  const dir = mkdtempSync('/tmp/sluice-test-mnt-');
  execFileSync('mount', [...options, device, dir]);
  mounts.push(dir);
  tempDirs.push(dir);
  return dir;
}

/** Reads `length` bytes at `offset` from a file (a backing file, an image). */
export function readBytes(path: string, offset: number, length: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(length);
    const n = readSync(fd, buffer, 0, length, offset);
    return buffer.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

/** Undoes everything this process set up: loops, mounts, files. */
export function cleanupLoops(): void {
  // Loops first: their ownership check reads the backing path, which vanishes with its tmpfs.
  for (const path of [...owned.keys()]) {
    try {
      detachLoop(path);
    } catch {
      // Detached by the test itself; or still ours over a backing file the test deleted (it removed
      // its directory first): the kernel then names it "… (deleted)", and its inode, still held by
      // the loop, is the one this process created. Left attached, such loops piled up on the
      // machine, two a CI run.
      try {
        const now = backFile(path);
        if (
          /^\/dev\/loop\d+$/.test(path) &&
          now.file === `${owned.get(path) ?? ''} (deleted)` &&
          now.inode === ownedInodes.get(path)
        )
          execFileSync('losetup', ['--detach', path]);
      } catch {
        // gone meanwhile
      }
      owned.delete(path);
      ownedInodes.delete(path);
    }
  }
  for (const dir of mounts.splice(0).reverse()) {
    try {
      execFileSync('umount', ['--lazy', dir]);
    } catch {
      // already gone
    }
  }
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/**
 * Pulls a drive out while it is being read, as far as a loop device can be: the kernel keeps a
 * detached loop until its last user closes it, so the device first shrinks to `keep` bytes (reads
 * past that fail at once), then is detached.
 */
export function pullLoop(loop: LoopDevice, keep = 16 * 1024 * 1024): void {
  assertOwnedLoop(loop.path);
  execFileSync('truncate', ['-s', String(keep), loop.backing]);
  execFileSync('losetup', ['--set-capacity', loop.path]);
  detachLoop(loop.path);
}

/** Bytes the kernel has read from block device `path` since it was attached (sysfs stat: sectors read, in 512-byte units). */
export function bytesReadFrom(path: string): number {
  const fields = readFileSync(`/sys/block/${basename(path)}/stat`, 'utf8')
    .trim()
    .split(/\s+/);
  return Number(fields[2]) * 512;
}
