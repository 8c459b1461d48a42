/**
 * The progress says which side limits the speed, as the writer measured it (limit-meter.ts), on
 * real devices: a card throttled by blkio; a download paced by a local server; a decoder slower
 * than the loop device it writes to, fed by a fast server or a local file.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import type { Progress } from '../../common/domain/progress.js';
import { assertTestTarget, collect, flashCli, spawnCli, type CliRun } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import { servePaced } from '../support/file-server.js';
import { createLoop, digestFile, readBytes, scratchDir } from '../support/loop-device.js';
import { slowCard } from '../support/throttle.js';
import { createHash } from 'node:crypto';

/** The progress reports of a --json run while it wrote, past its first `from` bytes (the decoder's start). */
function writingReports(run: CliRun, from: number): Progress[] {
  return run.events
    .filter((e) => e.type === 'progress')
    .map((e) => e as unknown as Progress & { type: string })
    .filter((p) => ['writing', 'downloading', 'decompressing'].includes(p.phase) && p.bytesDone > from);
}

/** The phases and limits seen, for the failure message. */
function summary(reports: readonly Progress[]): string {
  return JSON.stringify(reports.map((p) => [p.phase, p.bytesDone, p.limit]));
}

function sha(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

describeDevices('the bottleneck in the progress', () => {
  it('a 20 MB/s card: the drive limits the speed, a fast decoder (zstd) waiting for it most of the time', async () => {
    const { image, loop, group } = slowCard();
    try {
      const zst = `${image}.zst`;
      execFileSync('zstd', ['-1', '-q', '-T2', image, '-o', zst]);
      const run = await flashCli(zst, [loop.path], ['--no-verify'], { cgroup: group.dir });
      expect(
        run.events.find((e) => e.type === 'result'),
        run.stderr,
      ).toMatchObject({ status: 'ok' });
      // Past the first 16 MiB (0.8 s at 20 MB/s): the meter's window holds only the card's pace.
      const reports = writingReports(run, 16 * MiB);
      expect(reports.length, summary(reports)).toBeGreaterThanOrEqual(10);
      for (const p of reports) {
        expect(p.phase, summary(reports)).toBe('writing');
        expect(p.limit?.by, summary(reports)).toBe('drive');
      }
      // The decoder's bytes were ready long before each write ended.
      const driveWaits = reports.map((p) => p.limit?.driveWait ?? 0).sort((a, b) => a - b);
      expect(driveWaits[Math.floor(driveWaits.length / 2)], summary(reports)).toBeGreaterThan(0.5);
      expect(readBytes(loop.backing, 0, 96 * MiB).equals(readBytes(image, 0, 96 * MiB))).toBe(true);
    } finally {
      group.remove();
    }
  });

  /**
   * 32 MiB of base64 text and its .xz, in one block: xz decodes it on one thread at about 32 MB/s
   * here (1.0 s), where a loop device on /dev/shm takes GB/s. One block, because xz's threaded
   * decoder reads a whole block ahead before it writes anything: with blocks of 1 MiB the first
   * reports of a fast download rightly found the decoder waiting for input, and with a decode of
   * 0.5 s those were most of the reports the test looked at (it failed so twice in CI).
   */
  let text = '';
  beforeAll(() => {
    text = join(scratchDir(), 'text.img');
    execFileSync('sh', ['-c', `base64 -w 0 /dev/urandom | head -c ${32 * MiB} > '${text}' && xz -0 -T1 -k '${text}'`]);
  });

  /** Flashes `image` onto a fast loop device, checks it, and returns the reports that carry a limit. */
  async function flashFast(image: string): Promise<Progress[]> {
    const loop = createLoop({ size: 48 * MiB });
    const run = await flashCli(image, [loop.path]);
    expect(
      run.events.find((e) => e.type === 'result'),
      run.stderr,
    ).toMatchObject({ status: 'ok' });
    expect(sha(readBytes(loop.backing, 0, 32 * MiB))).toBe(digestFile(text));
    return writingReports(run, 0).filter((p) => p.limit !== undefined);
  }

  it('an .xz downloaded at 4 MB/s, slower than its decoder: the phase is downloading, limited by the source', async () => {
    const server = await servePaced(`${text}.xz`, 4_000_000);
    try {
      // Past the first 12 MiB: the writer's window (3 s) and the decoder's (2 s) hold only the download's pace.
      const reports = (await flashFast(`${server.base}/text.img.xz`)).filter((p) => p.bytesDone > 12 * MiB);
      expect(reports.length, summary(reports)).toBeGreaterThanOrEqual(5);
      for (const p of reports) {
        expect(p.phase, summary(reports)).toBe('downloading');
        expect(p.limit?.by, summary(reports)).toBe('source');
        expect(p.limit?.sourceWait, summary(reports)).toBeGreaterThan(0.5);
      }
    } finally {
      await server.close();
    }
  });

  it('the same .xz from a fast server: its bytes wait for the decoder, so the phase is decompressing', async () => {
    const server = await servePaced(`${text}.xz`, 1e12);
    try {
      const reports = (await flashFast(`${server.base}/text.img.xz`)).filter((p) => p.bytesDone > 12 * MiB);
      expect(reports.length, summary(reports)).toBeGreaterThanOrEqual(3);
      for (const p of reports) {
        expect(p.phase, summary(reports)).toBe('decompressing');
        expect(p.limit?.by, summary(reports)).toBe('source');
      }
    } finally {
      await server.close();
    }
  });

  it('the same .xz as a local file: decompressing, limited by the source', async () => {
    const reports = await flashFast(`${text}.xz`);
    expect(reports.length, summary(reports)).toBeGreaterThanOrEqual(3);
    for (const p of reports) {
      expect(p.phase, summary(reports)).toBe('decompressing');
      expect(p.limit?.by, summary(reports)).toBe('source');
    }
  });

  it('plain logs (no terminal, no --json) say writing once, however the limit is named', async () => {
    const loop = createLoop({ size: 48 * MiB });
    assertTestTarget(loop.path);
    const run = await collect(spawnCli(['flash', '--yes', `${text}.xz`, loop.path]));
    expect(run.code, run.stderr).toBe(0);
    const phases = run.stderr.split('\n').filter((line) => line.startsWith(`${loop.path}: `));
    expect(phases).toEqual([`${loop.path}: writing…`, `${loop.path}: syncing…`, `${loop.path}: verifying…`]);
  });
});
