/**
 * The progress says which side limits the speed, as the writer measured it (limit-meter.ts), on
 * real devices: a card throttled by blkio, a download paced by a local server, a decoder slower
 * than the loop device it writes to.
 */
import { execFileSync } from 'node:child_process';
import { basename, join } from 'node:path';
import { expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import type { Progress } from '../../common/domain/progress.js';
import { flashCli, type CliRun } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import { servePaced } from '../support/file-server.js';
import { createLoop, digestFile, readBytes, scratchDir, writeRandomFile } from '../support/loop-device.js';
import { slowCard } from '../support/throttle.js';
import { createHash } from 'node:crypto';

/** The progress reports of a --json run while it wrote, past its first `from` bytes (the decoder's start). */
function writingReports(run: CliRun, from: number): Progress[] {
  return run.events.filter((e) => e.type === 'progress').map((e) => e as unknown as Progress & { type: string }).filter((p) => ['writing', 'downloading', 'decompressing'].includes(p.phase) && p.bytesDone > from);
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
      expect(run.events.find((e) => e.type === 'result'), run.stderr).toMatchObject({ status: 'ok' });
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

  it('a 4 MB/s download onto a fast loop device: the phase is downloading, limited by the source', async () => {
    const dir = scratchDir();
    const image = join(dir, 'download.img');
    writeRandomFile(image, 16 * MiB);
    const loop = createLoop({ size: 32 * MiB, dir });
    const server = await servePaced(image, 4_000_000);
    try {
      const run = await flashCli(`${server.base}/${basename(image)}`, [loop.path]);
      expect(run.events.find((e) => e.type === 'result'), run.stderr).toMatchObject({ status: 'ok' });
      const reports = writingReports(run, 6 * MiB);
      expect(reports.length, summary(reports)).toBeGreaterThanOrEqual(5);
      for (const p of reports) {
        expect(p.phase, summary(reports)).toBe('downloading');
        expect(p.limit?.by, summary(reports)).toBe('source');
        expect(p.limit?.sourceWait, summary(reports)).toBeGreaterThan(0.5);
      }
      expect(sha(readBytes(loop.backing, 0, 16 * MiB))).toBe(digestFile(image));
    } finally {
      await server.close();
    }
  });

  it('an xz image decoded slower than the loop device writes: the phase is decompressing, limited by the source', async () => {
    const dir = scratchDir();
    const image = join(dir, 'text.img');
    // Base64 text: xz decodes it at tens of MB/s here, where the loop device on /dev/shm takes GB/s.
    execFileSync('sh', ['-c', `base64 -w 0 /dev/urandom | head -c ${32 * MiB} > '${image}' && xz -0 -T2 -k '${image}'`]);
    const loop = createLoop({ size: 48 * MiB, dir });
    const run = await flashCli(`${image}.xz`, [loop.path]);
    expect(run.events.find((e) => e.type === 'result'), run.stderr).toMatchObject({ status: 'ok' });
    const reports = writingReports(run, 0).filter((p) => p.limit !== undefined);
    expect(reports.length, summary(reports)).toBeGreaterThanOrEqual(3);
    for (const p of reports) {
      expect(p.phase, summary(reports)).toBe('decompressing');
      expect(p.limit?.by, summary(reports)).toBe('source');
    }
    expect(sha(readBytes(loop.backing, 0, 32 * MiB))).toBe(digestFile(image));
  });
});
