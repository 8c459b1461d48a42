/**
 * A real, empty disk of this system's own kind for tests, made by this test run and the only disk
 * a *.disk.test.ts may write:
 * - Linux: a loop device (loop-device.ts);
 * - macOS: a RAM disk, `hdiutil attach -nomount ram://SECTORS`, a real /dev/diskN with no volume;
 * - Windows: a fixed VHD that diskpart creates and attaches, a real \\.\PhysicalDriveN.
 * They need the administrator: root for losetup; on macOS the tests run as the runner's user and
 * the CLI itself elevates through sudo (passwordless on GitHub's macOS runners), and reading the
 * disk back goes through `sudo -n` too; on Windows the runner is an administrator already.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe } from 'vitest';
import { cleanupLoops, createLoop, isRoot } from './loop-device.js';

export interface TestDisk {
  /** The name the CLI is given: /dev/loopN, /dev/diskN, \\.\PhysicalDriveN. */
  path: string;
  size: number;
}

const made = new Map<string, () => void>();

/** `hdiutil attach -nomount ram://N` prints the new disk's node, padded: "/dev/disk4          \n". */
export function parseHdiutilAttach(output: string): string {
  const node = /^(\/dev\/disk\d+)\s*$/m.exec(output)?.[1];
  if (node === undefined) throw new Error(`hdiutil attach printed no disk: ${JSON.stringify(output)}`);
  return node;
}

/** diskpart's script for a new attached fixed VHD of `megabytes` at `file`. */
export function diskpartCreateScript(file: string, megabytes: number): string {
  return `create vdisk file="${file}" maximum=${megabytes} type=fixed\nselect vdisk file="${file}"\nattach vdisk\n`;
}

function diskpart(script: string): void {
  const file = join(tmpdir(), `sluice-diskpart-${process.pid}-${made.size}.txt`);
  writeFileSync(file, script);
  try {
    execFileSync('diskpart', ['/s', file], { encoding: 'utf8' });
  } finally {
    rmSync(file, { force: true });
  }
}

export function createTestDisk(size: number): TestDisk {
  if (process.platform === 'darwin') {
    const path = parseHdiutilAttach(
      execFileSync('hdiutil', ['attach', '-nomount', `ram://${size / 512}`], { encoding: 'utf8' }),
    );
    made.set(path, () => execFileSync('hdiutil', ['detach', path]));
    return { path, size };
  }
  if (process.platform === 'win32') {
    const file = join(tmpdir(), `sluice-test-${process.pid}-${made.size}.vhd`);
    diskpart(diskpartCreateScript(file, size / (1024 * 1024)));
    const number = execFileSync(
      'powershell.exe',
      ['-NoProfile', '-NonInteractive', '-Command', `(Get-DiskImage -ImagePath '${file}' | Get-Disk).Number`],
      { encoding: 'utf8' },
    ).trim();
    if (!/^\d+$/.test(number)) throw new Error(`the attached VHD ${file} has no disk number: ${number}`);
    const path = `\\\\.\\PhysicalDrive${number}`;
    made.set(path, () => {
      diskpart(`select vdisk file="${file}"\ndetach vdisk\n`);
      rmSync(file, { force: true });
    });
    return { path, size };
  }
  const loop = createLoop({ size });
  return { path: loop.path, size: loop.size };
}

/** Refuses any disk this run did not make (on Linux assertOwnedLoop checks loops on their own). */
export function assertTestDisk(path: string): void {
  if (process.platform !== 'linux' && !made.has(path)) throw new Error(`${path} is not a disk this test made`);
}

/** `length` bytes from the start of a test disk, read as the administrator. */
export function readTestDisk(disk: TestDisk, length: number): Buffer {
  assertTestDisk(disk.path);
  if (process.platform === 'darwin' && !isRoot)
    return execFileSync('sudo', ['-n', 'head', '-c', String(length), disk.path], { maxBuffer: length + 1 });
  // Windows reads a physical drive only in whole sectors: read whole 4 KiB blocks, keep `length`.
  const whole = Math.ceil(length / 4096) * 4096;
  const fd = openSync(disk.path, 'r');
  try {
    const bytes = Buffer.alloc(whole);
    let done = 0;
    while (done < whole) {
      const n = readSync(fd, bytes, done, Math.min(1 << 20, whole - done), done);
      if (n === 0) break;
      done += n;
    }
    return bytes.subarray(0, Math.min(done, length));
  } finally {
    closeSync(fd);
  }
}

/** Whether this run can make test disks: Linux as root; macOS and Windows in CI, which sets them up for it. */
const canMakeDisks = process.platform === 'linux' ? isRoot : process.env['CI'] === 'true';

/** A describe() for tests on real disks of this OS; like describeDevices, CI never skips them. */
export function describeDisks(name: string, body: () => void): void {
  if (process.env['CI'] === 'true' && !canMakeDisks)
    throw new Error('CI must run the disk tests as the administrator; refusing to skip them.');
  describe.skipIf(!canMakeDisks)(name, () => {
    afterAll(() => {
      for (const [path, remove] of made) {
        made.delete(path);
        remove();
      }
      cleanupLoops();
    });
    body();
  });
}
