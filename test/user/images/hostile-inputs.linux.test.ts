import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { MiB } from '../../../common/domain/units.js';
import { collect, spawnCli, type CliRun } from '../../support/cli.js';
import {
  bmapWithOpenElement,
  dmgWithMalformedPlist,
  qcow2CompressedClusters,
  qcow2SharedL2Table,
  xzHeaderThenZeros,
  zipWithBmapBomb,
} from '../../support/hostile-images.js';
import { scratchDir } from '../../support/loop-device.js';
import { writeDmg } from '../../support/udif.js';

/** What a probe of a small hostile file may take at most: it reads headers and tables, nothing more. */
const MAX_SECONDS = 5;
const MAX_RSS_MIB = 256;

interface Measured {
  run: CliRun;
  seconds: number;
  rssMiB: number;
}

/**
 * Runs the built CLI's `sluice info ARGS` under GNU time, which reports the peak RSS of the CLI
 * and of the decoder it may start (the largest of them). timeout kills the whole run past 20 s,
 * so a regression fails the test instead of hanging it.
 */
async function info(...args: string[]): Promise<Measured> {
  const started = performance.now();
  const run = await collect(
    spawnCli(['info', ...args], {
      wrapper: ['/usr/bin/time', '--format', 'peak-rss-kib=%M', 'timeout', '-s', 'KILL', '20'],
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const rss = /peak-rss-kib=(\d+)/.exec(run.stderr);
  return { run, seconds, rssMiB: Number(rss?.[1]) / 1024 };
}

/** The probe ends in time and in memory, refusing the file with exit 1 or 3 and a message saying what is wrong. */
async function expectRefused(message: RegExp, ...args: string[]): Promise<void> {
  const { run, seconds, rssMiB } = await info(...args);
  expect(run.stderr).toMatch(message);
  expect([1, 3]).toContain(run.code);
  expect(seconds).toBeLessThan(MAX_SECONDS);
  expect(rssMiB).toBeLessThanOrEqual(MAX_RSS_MIB);
}

describe('sluice info: a small hostile file is refused in seconds and megabytes', () => {
  let dir: string;

  beforeAll(() => {
    dir = scratchDir();
  });

  it('qcow2 whose compressed clusters all share one deflate blob (was 4.2 GB, 10.6 s)', async () => {
    const image = join(dir, 'shared-blob.qcow2');
    qcow2CompressedClusters(image, { shared: true });
    await expectRefused(
      /shared-blob\.qcow2 is a corrupt qcow2 image: several compressed clusters share the data at file byte 6291456/,
      image,
    );
  });

  it('qcow2 of 2,000 compressed 2 MiB clusters, each its own: the partition table is read without inflating them all (was 2.2 GB)', async () => {
    const image = join(dir, 'many-blobs.qcow2');
    qcow2CompressedClusters(image, { shared: false, fill: 1 });
    const { run, seconds, rssMiB } = await info('--json', image);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      format: 'qcow2',
      size: 2000 * 2 * MiB,
      partitionTable: { type: 'none' },
    });
    expect(seconds).toBeLessThan(MAX_SECONDS);
    expect(rssMiB).toBeLessThanOrEqual(MAX_RSS_MIB);
  });

  it('qcow2 whose every L1 entry points at one L2 table: 64M clusters from 2 MiB (was out of memory at 4.7 GB)', async () => {
    const image = join(dir, 'shared-l2.qcow2');
    qcow2SharedL2Table(image);
    await expectRefused(
      /shared-l2\.qcow2 is a corrupt qcow2 image: the L2 table of L1 entry 1 is at file byte \d+, which also holds another table or cluster/,
      image,
    );
  });

  it('zip whose .meta/image.bmap inflates to 2 GiB (was 6.2 GB)', async () => {
    const archive = join(dir, 'bmap-bomb.zip');
    zipWithBmapBomb(archive);
    await expectRefused(
      /\.meta\/image\.bmap inflates to more than the 4096 bytes its directory entry declares/,
      archive,
    );
  });

  it('bmap with an unclosed <ImageSize> and 4,000 spaces (was 11-21 s)', async () => {
    const image = join(dir, 'plain.img');
    writeFileSync(image, Buffer.alloc(MiB));
    writeFileSync(join(dir, 'open.bmap'), bmapWithOpenElement());
    await expectRefused(
      /block map open\.bmap is not valid: it is not well-formed XML/,
      '--bmap',
      join(dir, 'open.bmap'),
      image,
    );
  });

  describe('sidecar files that never end or never answer (were read until killed: 13-15 GB in 30 s, or hung)', () => {
    function imageIn(name: string): string {
      mkdirSync(join(dir, name));
      const image = join(dir, name, 'os.img');
      writeFileSync(image, Buffer.alloc(MiB));
      return image;
    }

    it('IMAGE.sha256 a symbolic link to /dev/zero', async () => {
      const image = imageIn('sha');
      symlinkSync('/dev/zero', `${image}.sha256`);
      await expectRefused(/checksum list \S+os\.img\.sha256 is a device, not a regular file/, image);
    });

    it('IMAGE.bmap a symbolic link to /dev/zero', async () => {
      const image = imageIn('bmap');
      symlinkSync('/dev/zero', `${image}.bmap`);
      await expectRefused(/block map \S+os\.img\.bmap is a device, not a regular file/, image);
    });

    it('SHA256SUMS a FIFO nobody writes', async () => {
      const image = imageIn('sums');
      execFileSync('mkfifo', [join(dir, 'sums', 'SHA256SUMS')]);
      await expectRefused(/checksum list \S+SHA256SUMS is a FIFO, not a regular file/, image);
    });
  });

  it('xz stream header followed by 16 MiB of zeros (was over 60 s)', async () => {
    const image = join(dir, 'padded.img.xz');
    xzHeaderThenZeros(image);
    await expectRefused(/xz file's index could not be found within 256 reads of its end/, image);
  });

  it('dmg whose block table claims more blocks than it holds (was a raw RangeError)', async () => {
    const image = join(dir, 'count.dmg');
    writeDmg(Buffer.alloc(2 * MiB, 7), image, { blockCount: 1_000_000 });
    await expectRefused(
      /count\.dmg is not a readable dmg \(UDIF\) image: its block table "whole disk \(Apple_HFS : 0\)" claims 1000000 blocks but holds 3 \(324 bytes\)\./,
      image,
    );
  });

  it('dmg whose tables claim a disk of 5.7e20 bytes (was "probe sent an answer of the wrong shape")', async () => {
    const image = join(dir, 'huge.dmg');
    writeDmg(Buffer.alloc(2 * MiB, 7), image, { claimedZeroSectors: 5.7e20 / 512 });
    await expectRefused(
      /huge\.dmg is not a readable dmg \(UDIF\) image: its block tables say the disk inside holds 5\.70e\+20 bytes, more than any drive \(1 PiB\): the file is damaged or was made to mislead\./,
      image,
    );
  });

  it('dmg whose property list closes an element it never opened', async () => {
    const good = join(dir, 'good.dmg');
    writeDmg(Buffer.alloc(4 * MiB, 7), good);
    dmgWithMalformedPlist(good, join(dir, 'bad.dmg'));
    await expectRefused(
      /bad\.dmg is not a readable dmg \(UDIF\) image: its property list is not well-formed XML/,
      join(dir, 'bad.dmg'),
    );
  });
});
