/**
 * The device lifecycle around a write, on real loop devices: mounted filesystems are unmounted
 * first (or the write refused, untouched, when a program uses one), and afterwards the kernel sees
 * the partitions of the image that was written.
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { MiB } from '../../../common/domain/units.js';
import { linuxPlatform } from '../../../writer/platform/linux.js';
import { assertTestTarget, flashCli, resultsOf } from '../../support/cli.js';
import { describeDevices } from '../../support/device-suite.js';
import { flashFile } from '../../support/engine.js';
import {
  createLoop,
  digestFile,
  mountDevice,
  readBytes,
  scratchDir,
  waitForPath,
  writeRandomFile,
} from '../../support/loop-device.js';
import { mkfsExt4, mountedCard, mountpointsOf, partitionedImage } from '../../support/partitions.js';

const CARD_SIZE = 48 * MiB;
const IMAGE_SIZE = 24 * MiB;

/** The filesystem label on a partition, probed from the device itself (no blkid cache). */
function labelOf(partition: string): string {
  assertTestTarget(partition);
  return execFileSync('blkid', ['--probe', '--match-tag', 'LABEL', '--output', 'value', partition], {
    encoding: 'utf8',
  }).trim();
}

describeDevices('unmount → write → re-read partitions', () => {
  it('sees filesystems mounted from partitions as the disk’s own (what the system-disk rule rests on)', async () => {
    const card = await mountedCard(scratchDir(), CARD_SIZE);
    const facts = await linuxPlatform.inspect(card.loop.path);
    expect(facts.mountpoints.sort()).toEqual([card.boot, card.root].sort());
    const partitions = [`${card.loop.path}p1`, `${card.loop.path}p2`].map((p) => statSync(p).rdev);
    expect(facts.devices).toEqual(expect.arrayContaining([statSync(card.loop.path).rdev, ...partitions]));
  });

  it('unmounts both mounted partitions, writes, and the kernel then sees the new image’s partition and label', async () => {
    const dir = scratchDir();
    const card = await mountedCard(dir, CARD_SIZE);
    const { path } = card.loop;
    expect(mountpointsOf(`${path}p1`)).toEqual([card.boot]);
    expect(mountpointsOf(`${path}p2`)).toEqual([card.root]);
    const image = partitionedImage(dir, IMAGE_SIZE, 'SLUICE-NEW');

    // Every byte, so the card can be compared whole (its free space would otherwise keep the old card's bytes).
    const run = await flashCli(image, [path], ['--exact']);

    expect(run.code).toBe(0);
    // Eject is on by default; a loop device has nothing to power off, which is not a failure.
    expect(resultsOf(run).get(path)).toMatchObject({ status: 'ok', verified: true, ejected: false });
    expect(resultsOf(run).get(path)).not.toHaveProperty('warnings');
    expect(mountpointsOf(`${path}p1`)).toEqual([]);
    expect(mountpointsOf(`${path}p2`)).toEqual([]);
    expect(readBytes(card.loop.backing, 0, IMAGE_SIZE).equals(readFileSync(image))).toBe(true);
    // The image has one partition: p1 now holds its filesystem, and the card's old p2 is gone.
    await waitForPath(`${path}p1`);
    expect(labelOf(`${path}p1`)).toBe('SLUICE-NEW');
    expect(existsSync(`${path}p2`)).toBe(false);
  });

  it('refuses a partition a program is using, naming the mountpoint and the program, and writes nothing', async () => {
    const dir = scratchDir();
    const card = await mountedCard(dir, CARD_SIZE);
    const { path, backing } = card.loop;
    const image = partitionedImage(dir, IMAGE_SIZE, 'SLUICE-NEW');
    const sleeper = spawn('sleep', ['300'], { cwd: card.root, stdio: 'ignore' });
    await once(sleeper, 'spawn');
    try {
      execFileSync('sync');
      const before = digestFile(backing);

      const run = await flashCli(image, [path]);

      expect(run.code).toBe(4);
      const result = resultsOf(run).get(path);
      expect(result).toMatchObject({ status: 'failed', code: 'target-busy', bytes: 0 });
      expect(result?.message).toContain(card.root);
      expect(result?.message).toContain(`sleep (pid ${sleeper.pid}: its working directory is inside it)`);
      // Refused before anything was unmounted: the idle boot partition stays mounted too.
      expect(mountpointsOf(`${path}p1`)).toEqual([card.boot]);
      expect(mountpointsOf(`${path}p2`)).toEqual([card.root]);
      expect(digestFile(backing)).toBe(before);
    } finally {
      sleeper.kill();
    }
  });

  it('refuses, unmounting nothing, when a mountpoint’s path now leads to another filesystem', async () => {
    // The path the mount table gives is hidden under a later mount that puts a link to another
    // filesystem in its place: root's umount of that path would unmount the other one.
    const dir = scratchDir();
    const card = await mountedCard(dir, CARD_SIZE);
    const { path, backing } = card.loop;
    const other = createLoop({ size: 16 * MiB, fill: 'zero', dir });
    mkfsExt4(other.path, 'OTHER');
    const otherMount = mountDevice(other.path);
    const hiding = join(dir, 'hiding');
    const shadowed = join(hiding, 'card');
    execFileSync('umount', [card.root]);
    mkdirSync(shadowed, { recursive: true });
    execFileSync('mount', [`${path}p2`, shadowed]);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1M', 'tmpfs', hiding]);
    try {
      symlinkSync(otherMount, shadowed);
      const image = partitionedImage(dir, IMAGE_SIZE, 'SLUICE-NEW');
      execFileSync('sync');
      const before = digestFile(backing);

      const run = await flashCli(image, [path]);

      expect(run.code).toBe(4);
      const result = resultsOf(run).get(path);
      expect(result).toMatchObject({ status: 'failed', code: 'target-busy', bytes: 0 });
      expect(result?.message).toContain(
        `${shadowed} (on ${path}) no longer leads to that filesystem (renamed, or hidden under another mount)`,
      );
      expect(result?.message).toContain('Nothing was unmounted.');
      expect(mountpointsOf(other.path)).toEqual([otherMount]);
      expect(mountpointsOf(`${path}p2`)).toEqual([shadowed]);
      expect(mountpointsOf(`${path}p1`)).toEqual([card.boot]);
      expect(digestFile(backing)).toBe(before);
    } finally {
      execFileSync('umount', [hiding]);
      execFileSync('umount', [shadowed]);
    }
  });

  it('unmounts a filesystem made on the whole disk, with no partition table', async () => {
    const dir = scratchDir();
    const loop = createLoop({ size: 32 * MiB, fill: 'zero', dir });
    mkfsExt4(loop.path, 'WHOLE');
    const mountpoint = mountDevice(loop.path);
    const image = join(dir, 'image.img');
    writeRandomFile(image, 8 * MiB);

    const run = await flashCli(image, [loop.path], ['--no-eject']);

    expect(run.code).toBe(0);
    const result = resultsOf(run).get(loop.path);
    expect(result).toMatchObject({ status: 'ok' });
    // Eject was not asked for, so the result does not talk about it; a disk without partitions
    // before or after gives the partition re-read nothing to complain about.
    expect(result).not.toHaveProperty('ejected');
    expect(result).not.toHaveProperty('warnings');
    expect(existsSync(`${loop.path}p1`)).toBe(false);
    expect(mountpointsOf(loop.path)).toEqual([]);
    expect(existsSync(mountpoint)).toBe(true);
    expect(readBytes(loop.backing, 0, 8 * MiB).equals(readFileSync(image))).toBe(true);
  });
});

describeDevices('an image stored on the drive it would be written to', () => {
  it('is refused by the helper’s own check (the engine, given nothing but the descriptor)', async () => {
    const dir = scratchDir();
    const card = await mountedCard(dir, CARD_SIZE);
    const image = join(card.root, 'image.img');
    writeRandomFile(image, 2 * MiB);
    execFileSync('sync');
    const before = digestFile(card.loop.backing);

    const [result] = await flashFile(image, [card.loop.path]);

    expect(result).toMatchObject({ status: 'failed', code: 'target-is-source', bytes: 0 });
    expect(result?.status === 'failed' && result.message).toContain(`stored on ${card.loop.path}`);
    expect(mountpointsOf(`${card.loop.path}p2`)).toEqual([card.root]);
    expect(digestFile(card.loop.backing)).toBe(before);
  });

  it('is refused by the CLI too, with the same code and words', async () => {
    const dir = scratchDir();
    const card = await mountedCard(dir, CARD_SIZE);
    const image = join(card.root, 'image.img');
    writeRandomFile(image, 2 * MiB);

    const run = await flashCli(image, [card.loop.path]);

    expect(run.code).toBe(4);
    expect(resultsOf(run).get(card.loop.path)).toMatchObject({ status: 'failed', code: 'target-is-source' });
    expect(resultsOf(run).get(card.loop.path)?.message).toContain(`The image file is stored on ${card.loop.path}`);
    expect(mountpointsOf(`${card.loop.path}p2`)).toEqual([card.root]);
  });
});
