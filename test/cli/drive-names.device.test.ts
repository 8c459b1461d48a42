/**
 * The names the command line is given for drives: a symbolic link to a drive is that drive from
 * the first look on (findings 9 and 14), and a name under /dev that does not exist is a drive that
 * is gone, never a new file (finding 22).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { assertTestTarget, collect, resultsOf, spawnCli } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import {
  createLoop,
  digestFile,
  partitionedLoop,
  readBytes,
  scratchDir,
  waitForPath,
  writeRandomFile,
} from '../support/loop-device.js';
import { partitionedImage } from '../support/partitions.js';
import { asTestUser, shareWithTestUser } from '../support/unprivileged.js';

describeDevices('a symbolic link named as the drive', () => {
  it('is the disk it leads to: written, reported and re-read under the disk’s own name', async () => {
    // The card had partitions, so the re-read after the write must delete them first (partx
    // --delete LINK used to fail: "the system did not pick up its new partitions").
    const loop = await partitionedLoop('label: dos\nstart=2048, size=8192, type=83\nstart=10240, type=83\n', 32 * MiB);
    assertTestTarget(loop.path);
    const dir = scratchDir();
    const image = partitionedImage(dir, 16 * MiB, 'VIA-LINK');
    const link = join(dir, 'card');
    symlinkSync(loop.path, link);

    // --exact: the card started as random bytes, and this test wants it equal to the image byte for byte.
    const run = await collect(spawnCli(['flash', '--yes', '--json', '--no-eject', '--exact', image, link]));

    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`${link} is ${loop.path}.`);
    expect([...resultsOf(run).keys()]).toEqual([loop.path]);
    const result = resultsOf(run).get(loop.path);
    expect(result).toMatchObject({ status: 'ok', verified: true });
    expect(result).not.toHaveProperty('warnings');
    expect(readBytes(loop.backing, 0, 16 * MiB).equals(readFileSync(image))).toBe(true);
    // The image has one partition: the kernel sees it, and the card's old second one is gone.
    await waitForPath(`${loop.path}p1`);
    expect(existsSync(`${loop.path}p2`)).toBe(false);
  });

  it('is judged by the CLI’s own checks before anyone is asked for a password', async () => {
    // As a user with no right to sudo: a drive the CLI refuses ends with 4 (refused) before sudo
    // runs; one it let through would end with 5 (sudo said no).
    const dir = scratchDir();
    const loop = createLoop({ size: 1 * MiB, dir });
    assertTestTarget(loop.path);
    const image = join(dir, 'image.img');
    writeRandomFile(image, 2 * MiB);
    shareWithTestUser(image);
    const link = join(dir, 'card');
    symlinkSync(loop.path, link);
    const before = digestFile(loop.backing);

    const run = await collect(
      spawnCli(['flash', '--yes', '--json', '--elevate', 'sudo', image, link], { wrapper: asTestUser() }),
    );

    expect(run.code).toBe(4);
    expect(resultsOf(run).get(loop.path)).toMatchObject({ status: 'failed', code: 'target-too-small' });
    expect(digestFile(loop.backing)).toBe(before);
  });
});

describeDevices('a name under /dev that does not exist', () => {
  /** `sluice flash` of a small image to `target`: refused as a drive that is gone, exit 4. */
  async function expectGone(target: string): Promise<void> {
    const image = join(scratchDir(), 'image.img');
    writeRandomFile(image, 1 * MiB);
    const run = await collect(spawnCli(['flash', '--yes', '--json', image, target]));
    expect(run.code).toBe(4);
    expect(resultsOf(run).get(target)).toMatchObject({
      status: 'failed',
      code: 'target-not-found',
      message: `${target} does not exist: was the drive unplugged?`,
    });
    expect(existsSync(target)).toBe(false);
  }

  it('in a folder of /dev that exists (/dev/mapper on a system whose /dev is a plain tmpfs): refused, nothing created', async () => {
    const folder = `/dev/sluice-test-${process.pid}`;
    mkdirSync(folder);
    try {
      await expectGone(join(folder, 'card'));
      expect(readdirSync(folder)).toEqual([]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('in /dev itself, or in a folder of it that does not exist either', async () => {
    const mapper = existsSync('/dev/mapper');
    await expectGone(`/dev/sluice-test-gone-${process.pid}`);
    await expectGone(`/dev/mapper/sluice-test-${process.pid}`);
    expect(existsSync('/dev/mapper')).toBe(mapper);
  });
});
