/**
 * `sluice backup` of a real disk of whatever OS runs it (test/support/test-disk.ts: a loop device,
 * a macOS RAM disk, a Windows VHD), compressed with gzip and zstd, which this side does in-process
 * (node:zlib) on every OS. On Windows it proves the way the drive's bytes leave the elevated
 * helper there, the image named pipe (UAC passes no descriptor); on macOS the sudo path with a
 * kernel pipe. The files are decoded here and must be the disk, byte for byte.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, zstdDecompressSync } from 'node:zlib';
import { afterAll, expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { assertTestTarget, collect, resultsOf, spawnCli } from '../support/cli.js';
import { isRoot } from '../support/loop-device.js';
import { assertTestDisk, createTestDisk, describeDisks, readTestDisk } from '../support/test-disk.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-backup-disk-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Not root on macOS: the CLI asks sudo (the default without a terminal would be pkexec, Linux's). */
const elevate = process.platform === 'darwin' && !isRoot ? ['--elevate', 'sudo'] : [];

describeDisks('backup of a real disk of this OS', () => {
  it.each([
    ['gz', '.gz', gunzipSync],
    ['zstd', '.zst', zstdDecompressSync],
  ] as const)(
    '%s: the whole disk, verified, and the file decodes to the disk byte for byte',
    async (format, suffix, decode) => {
      const size = 32 * MiB;
      const disk = createTestDisk(size);
      assertTestDisk(disk.path);
      if (process.platform === 'linux') assertTestTarget(disk.path);
      const image = join(dir, `content-${format}.img`);
      writeFileSync(image, randomBytes(3 * MiB + 5));
      const flashed = await collect(spawnCli(['flash', '--yes', '--json', '--no-eject', ...elevate, image, disk.path]));
      expect(flashed.code, flashed.stderr).toBe(0);

      const file = join(dir, `backup${suffix}`);
      const run = await collect(
        spawnCli(['backup', '--yes', '--json', ...elevate, '--compress', format, disk.path, file]),
      );

      expect(run.code, run.stderr).toBe(0);
      expect(resultsOf(run).get(file)).toMatchObject({ status: 'ok', bytes: size });
      expect(decode(readFileSync(file)).equals(readTestDisk(disk, size))).toBe(true);
    },
  );
});
