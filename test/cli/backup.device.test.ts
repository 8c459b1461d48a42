import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { linuxPlatform } from '../../writer/platform/linux.js';
import { refuseSource } from '../../writer/source-device.js';
import {
  assertTestTarget,
  backupCli,
  collect,
  flashCli,
  type CliRun,
  resultsOf,
  spawnBackup,
  spawnCli,
  waitForEvent,
} from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import {
  assertOwnedLoop,
  createLoop,
  partitionedLoop,
  pullLoop,
  readBytes,
  scratchDir,
  smallTmpfs,
} from '../support/loop-device.js';
import { mountedCard, mountpointsOf } from '../support/partitions.js';
import { rootDisk } from '../support/system-disk.js';
import { slowSourceDrive } from '../support/throttle.js';

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A 24 MiB drive of random bytes with an MBR whose partitions end at 11 MiB. */
function partitionedDrive() {
  return partitionedLoop('label: dos\n1M,4M,c\n,6M,83\n', 24 * MiB);
}

/**
 * A backup stopped while reading says the bytes it read from the drive, as its last progress line
 * does: not how far into the image it got (free space and the maps read first make those differ).
 */
function expectStoppedAfterBytesRead(run: CliRun, bytes: number | undefined): void {
  const progress = run.events.filter((e) => e.type === 'progress');
  expect(progress.at(-1)).toMatchObject({ phase: 'reading', bytesDone: bytes });
}

describeDevices('sluice backup', () => {
  it('with --all-blocks, backs a drive up into a raw image that is the whole drive, and flashing it back gives an identical drive', async () => {
    const source = await partitionedDrive();
    const file = join(scratchDir(), 'backup.img');
    const run = await backupCli(source.path, file, ['--all-blocks']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(resultsOf(run).get(file)).toMatchObject({ status: 'ok', written: true, verified: true, bytes: 24 * MiB });
    const drive = readFileSync(source.backing);
    expect(sha256(readFileSync(file))).toBe(sha256(drive));
    expect(existsSync(`${file}.incomplete`)).toBe(false);

    const copy = createLoop({ size: 32 * MiB });
    const back = await flashCli(file, [copy.path], ['--no-eject']);
    expect(back.code, back.stderr).toBe(0);
    expect(sha256(readBytes(copy.backing, 0, 24 * MiB))).toBe(sha256(drive));
  });

  it('a block map that cannot be written fails the backup, says the backup itself is kept, and leaves no partial map', async () => {
    const source = await partitionedDrive();
    const dir = scratchDir();
    const file = join(dir, 'backup.img');
    // A folder where the map goes: the map is written whole, but cannot take its name.
    mkdirSync(`${file}.bmap`);
    const run = await backupCli(source.path, file, ['--all-blocks']);
    expect(run.code, run.stdout + run.stderr).toBe(1);
    const result = resultsOf(run).get(file);
    expect(result).toMatchObject({ status: 'failed', code: 'write-error' });
    expect(result?.message).toMatch(/^The block map .*backup\.img\.bmap could not be written: /);
    expect(result?.message).toContain(`${file} itself was saved whole and verified, and is kept.`);
    expect(result?.message).not.toContain('deleted');
    expect(sha256(readFileSync(file))).toBe(sha256(readFileSync(source.backing)));
    expect(readdirSync(dir).sort()).toEqual(['backup.img', 'backup.img.bmap']);
  });

  it('with --all-blocks, backs a drive up compressed with zstd, verified by decoding it back, and it flashes back identical', async () => {
    const source = await partitionedDrive();
    const file = join(scratchDir(), 'backup.img.zst');
    const run = await backupCli(source.path, file, ['--compress', 'zstd', '--all-blocks']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(resultsOf(run).get(file)).toMatchObject({ status: 'ok', verified: true, bytes: 24 * MiB });
    const drive = readFileSync(source.backing);
    expect(sha256(execFileSync('zstd', ['-dc', file], { maxBuffer: 64 * MiB }))).toBe(sha256(drive));

    const copy = createLoop({ size: 24 * MiB });
    const back = await flashCli(file, [copy.path], ['--no-eject']);
    expect(back.code, back.stderr).toBe(0);
    expect(sha256(readFileSync(copy.backing))).toBe(sha256(drive));
  });

  it.each([
    ['xz', 'xz', '.xz'],
    ['gz', 'gzip', '.gz'],
  ] as const)(
    'backs a drive up compressed with %s (decoded back to verify), and the file decodes to the drive with %s and flashes back identical',
    async (format, tool, suffix) => {
      // Mostly empty, as real cards are: xz on 24 MiB of random bytes would take most of a minute here.
      const source = createLoop({ size: 24 * MiB, fill: 'zero' });
      const random = randomBytes(2 * MiB);
      const backing = openSync(source.backing, 'r+');
      writeSync(backing, random, 0, random.length, 3 * MiB + 17);
      closeSync(backing);
      const file = join(scratchDir(), `backup.img${suffix}`);
      const run = await backupCli(source.path, file, ['--compress', format]);
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(resultsOf(run).get(file)).toMatchObject({ status: 'ok', verified: true, bytes: 24 * MiB });
      const drive = readFileSync(source.backing);
      expect(sha256(execFileSync(tool, ['-dc', file], { maxBuffer: 64 * MiB }))).toBe(sha256(drive));

      const copy = createLoop({ size: 24 * MiB });
      const back = await flashCli(file, [copy.path], ['--no-eject']);
      expect(back.code, back.stderr).toBe(0);
      expect(sha256(readFileSync(copy.backing))).toBe(sha256(drive));
    },
  );

  it('stops at the end of the last partition with --trim-to-partitions', async () => {
    const source = await partitionedDrive();
    const file = join(scratchDir(), 'trimmed.img');
    const run = await backupCli(source.path, file, ['--trim-to-partitions']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    // 1 MiB before the first partition, then 4 MiB and 6 MiB.
    expect(statSync(file).size).toBe(11 * MiB);
    expect(sha256(readFileSync(file))).toBe(sha256(readBytes(source.backing, 0, 11 * MiB)));
  });

  /** A backup of a slow drive, once it is under way (4 MiB written). */
  async function backupUnderway(name: string) {
    const { loop, group } = slowSourceDrive();
    const file = join(scratchDir(), name);
    const child = spawnBackup(loop.path, file, [], { cgroup: group.dir });
    const done = collect(child);
    await waitForEvent(
      child,
      (e) => e.type === 'progress' && e['phase'] === 'reading' && Number(e['bytesDone']) >= 4 * MiB,
    );
    return { loop, group, file, child, done };
  }

  it('says the drive went away when it is removed mid-backup, and deletes the partial file', async () => {
    const { loop, group, file, done } = await backupUnderway('pulled.img');
    try {
      pullLoop(loop);
      const run = await done;
      expect(run.code).toBe(1);
      const result = resultsOf(run).get(file);
      expect(result).toMatchObject({ status: 'failed', code: 'source-read-error' });
      expect(result?.message).toMatch(/stopped answering at byte offset \d+: was it unplugged\?/);
      expect(result?.message).toMatch(/incomplete backup file was deleted/);
      expectStoppedAfterBytesRead(run, result?.bytes);
      expect(existsSync(file)).toBe(false);
      expect(existsSync(`${file}.incomplete`)).toBe(false);
    } finally {
      group.remove();
    }
  });

  it('stops at Ctrl-C with exit 130 and deletes the partial file', async () => {
    const { group, file, child, done } = await backupUnderway('cancelled.img');
    try {
      const cancelledAt = performance.now();
      child.kill('SIGINT');
      const run = await done;
      expect(run.code, run.stdout + run.stderr).toBe(130);
      expect((performance.now() - cancelledAt) / 1000).toBeLessThan(2);
      const result = resultsOf(run).get(file);
      expect(result).toMatchObject({ status: 'cancelled' });
      expectStoppedAfterBytesRead(run, result?.bytes);
      expect(result?.bytes).toBeGreaterThanOrEqual(4 * MiB);
      expect(existsSync(file)).toBe(false);
      expect(existsSync(`${file}.incomplete`)).toBe(false);
    } finally {
      group.remove();
    }
  });

  it('says at Ctrl-C that the drive, only read, is unchanged and that the incomplete file was deleted', async () => {
    const { loop, group } = slowSourceDrive();
    const file = join(scratchDir(), 'said.img');
    try {
      assertOwnedLoop(loop.path);
      assertTestTarget(file);
      // Without --json: the sentence a person reads.
      const child = spawnCli(['backup', '--yes', loop.path, file], { cgroup: group.dir });
      const done = collect(child);
      await new Promise<void>((resolve) =>
        child.stderr?.on('data', (text: string | Buffer) => String(text).includes(`${file}: reading…`) && resolve()),
      );
      child.kill('SIGINT');
      const run = await done;
      expect(run.code, run.stdout + run.stderr).toBe(130);
      expect(run.stdout).toBe(
        `${file}: cancelled. The drive was only read: it is unchanged. The incomplete backup file was deleted.\n`,
      );
      expect(existsSync(file)).toBe(false);
      expect(existsSync(`${file}.incomplete`)).toBe(false);
    } finally {
      group.remove();
    }
  });

  it('refuses a partition, and anything not a whole disk, before asking for rights or making a file', async () => {
    const source = await partitionedDrive();
    const file = join(scratchDir(), 'partition.img');
    assertOwnedLoop(source.path);
    const run = await collect(spawnCli(['backup', '--yes', '--json', `${source.path}p1`, file]));
    expect(run.code).toBe(4);
    expect(resultsOf(run).get(`${source.path}p1`)).toMatchObject({ status: 'failed', code: 'target-is-partition' });
    expect(existsSync(file)).toBe(false);
    expect(refuseSource(await linuxPlatform.inspect(source.backing))).toMatchObject({
      code: 'target-not-block-device',
    });
  });

  it('refuses to store the backup on the drive being backed up (it is unmounted before it is read)', async () => {
    const card = await mountedCard(scratchDir(), 48 * MiB);
    const file = join(card.root, 'backup.img');
    assertOwnedLoop(card.loop.path);
    const run = await collect(spawnCli(['backup', '--yes', '--json', card.loop.path, file]));
    expect(run.code).toBe(4);
    expect(resultsOf(run).get(file)).toMatchObject({
      status: 'failed',
      code: 'target-is-source',
      message: expect.stringContaining('the drive being backed up') as unknown,
    });
    expect(existsSync(file)).toBe(false);
    expect(mountpointsOf(`${card.loop.path}p2`)).toEqual([card.root]);
  });

  it('gives the helper’s own reason when it cannot open the drive (held exclusively elsewhere), not a guess from the empty stream', async () => {
    const source = await partitionedDrive();
    const file = join(scratchDir(), 'busy.img');
    assertOwnedLoop(source.path);
    // Held the way a disk tool holds it: an exclusive open (read-only; nothing is written).
    const held = openSync(source.path, constants.O_RDONLY | constants.O_EXCL);
    try {
      const run = await backupCli(source.path, file, ['--trim-to-partitions']);
      expect(run.code).toBe(4);
      expect(resultsOf(run).get(file)).toMatchObject({
        status: 'failed',
        code: 'target-busy',
        message: expect.stringContaining('in use by another program') as unknown,
      });
      expect(existsSync(file)).toBe(false);
      expect(existsSync(`${file}.incomplete`)).toBe(false);
    } finally {
      closeSync(held);
    }
  });

  it('refuses the system disk (checked by the rules only; nothing opens it)', async () => {
    const facts = await linuxPlatform.inspect(rootDisk());
    expect(refuseSource(facts)).toMatchObject({
      code: 'target-system',
      message: expect.stringContaining('holds the running system') as unknown,
    });
  });
});

describeDevices('a backup that does not fit', () => {
  it('raw: says so before reading the drive; compressed: gives the compressor’s own words; nothing is left behind either way', async () => {
    const source = await partitionedDrive();
    const full = smallTmpfs(4 * MiB);
    assertOwnedLoop(source.path);
    const raw = join(full, 'raw.img');
    const rawRun = await collect(spawnCli(['backup', '--yes', '--json', source.path, raw]));
    expect(rawRun.code).toBe(1);
    expect(resultsOf(rawRun).get(raw)).toMatchObject({
      status: 'failed',
      code: 'target-full',
      message: expect.stringContaining('not enough free space') as unknown,
    });
    const packed = join(full, 'packed.img.zst');
    // Random bytes do not compress: 24 MiB of them cannot fit in 4 MiB.
    const packedRun = await collect(spawnCli(['backup', '--yes', '--json', '--compress', 'zstd', source.path, packed]));
    expect(packedRun.code).toBe(1);
    expect(resultsOf(packedRun).get(packed)).toMatchObject({
      status: 'failed',
      code: 'target-full',
      message: expect.stringMatching(
        /^The disk holding .*packed\.img\.zst is full: the compressed backup did not fit\./,
      ) as unknown,
    });
    // Stopped part way: more than the 4 MiB that fit was read, and the result says how much, as the last progress line does.
    expectStoppedAfterBytesRead(packedRun, resultsOf(packedRun).get(packed)?.bytes);
    expect(resultsOf(packedRun).get(packed)?.bytes).toBeGreaterThan(4 * MiB);
    expect(readdirSync(full)).toEqual([]);
  });
});
