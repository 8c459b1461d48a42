/**
 * The CLI on a real disk of whatever OS runs it (test/support/test-disk.ts makes one: a loop
 * device, a macOS RAM disk, a Windows VHD): the same image written, verified by the helper, and
 * read back here. On macOS it also proves the sudo path (the tests run as the runner's user), and
 * on Windows that PhysicalDrive names, volume locking and unbuffered verify work on a real drive.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { assertTestTarget, collect, resultsOf, spawnCli } from '../support/cli.js';
import { isRoot } from '../support/loop-device.js';
import { assertTestDisk, createTestDisk, describeDisks, readTestDisk } from '../support/test-disk.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-disk-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Not root on macOS: the CLI asks sudo (the default without a terminal would be pkexec, Linux's). */
const elevate = process.platform === 'darwin' && !isRoot ? ['--elevate', 'sudo'] : [];

describeDisks('flash and verify on a real disk of this OS', () => {
  it('a raw image of an odd size: written, verified, and the disk holds it byte for byte', async () => {
    const disk = createTestDisk(32 * MiB);
    assertTestDisk(disk.path);
    if (process.platform === 'linux') assertTestTarget(disk.path);
    const bytes = randomBytes(5 * MiB + 77);
    const image = join(dir, 'image.img');
    writeFileSync(image, bytes);

    const run = await collect(spawnCli(['flash', '--yes', '--json', '--no-eject', ...elevate, image, disk.path]));

    expect(run.code, run.stderr).toBe(0);
    expect(resultsOf(run).get(disk.path)).toMatchObject({ status: 'ok', verified: true, bytes: bytes.length });
    expect(readTestDisk(disk, bytes.length).equals(bytes)).toBe(true);
  });
});
