/**
 * The probe process (user/images/processes/probe-launch.ts, probe/main.ts): what it answers is what the
 * probe finds, and an image that makes it run out of memory or time costs only that process,
 * within its limits, while this process carries on. The hostile inputs are made here.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MiB } from '../../../../common/domain/units.js';
import type { ProbeLimits } from '../../../../user/images/processes/probe-launch.js';
import { builtProbe, builtProbeLaunch } from '../../../support/built-modules.js';
import { serve, type FileServer } from '../../../support/file-server.js';
import { cleanupLoops, scratchDir, writeRandomFile } from '../../../support/loop-device.js';
import { osImage, sh } from '../../../support/os-image.js';
import { qcow2SharedL2Table } from '../../../support/hostile-images.js';
import { findDescendant, hasExited, watchDescendants, type SeenProcess } from '../../../support/processes.js';

const { prepareImageInChild, checkedAnswer, DEFAULT_PROBE_LIMITS } = await builtProbeLaunch();
const { prepareImage } = await builtProbe();

const isProbe = (argv: string[]) => argv.some((a) => a.endsWith('out/run/probe.js'));
/** The memory the probe process may hold at most, as issue 17 asks: 256 MB. */
const RSS_CEILING = 256e6;

/**
 * Runs `probe` while watching the probe processes it starts (their peak memory) and this
 * process's own event loop (the longest it went without running a timer).
 */
async function watched<T>(probe: () => Promise<T>): Promise<{
  outcome: PromiseSettledResult<T>;
  ms: number;
  probes: SeenProcess[];
  pids: number[];
  longestStallMs: number;
}> {
  const watch = watchDescendants(process.pid, isProbe);
  let last = performance.now();
  let longestStallMs = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    longestStallMs = Math.max(longestStallMs, now - last);
    last = now;
  }, 10);
  const started = performance.now();
  const [outcome] = await Promise.allSettled([probe()]);
  const ms = performance.now() - started;
  clearInterval(ticker);
  const seen = watch.stop();
  return { outcome: outcome!, ms, probes: [...seen.values()], pids: [...seen.keys()], longestStallMs };
}

function failureOf(outcome: PromiseSettledResult<unknown>): { code: string; message: string } {
  expect(outcome.status).toBe('rejected');
  const reason = (outcome as PromiseRejectedResult).reason as {
    name: string;
    failure: { code: string; message: string };
  };
  expect(reason.name).toBe('JobError');
  return reason.failure;
}

const peakOf = (probes: SeenProcess[]) => Math.max(0, ...probes.map((p) => p.peakBytes));
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

/** A bmap of `ranges` single-block ranges (every other 4 KiB block mapped), beside a sparse raw image of the size it maps. */
function imageWithLongBmap(dir: string, ranges: number): string {
  const image = join(dir, 'long.img');
  const lines = Array.from(
    { length: ranges },
    (_, i) => `    <Range chksum="${'ab'.repeat(32)}">${2 * i}</Range>\n`,
  ).join('');
  writeFileSync(
    `${image}.bmap`,
    `<?xml version="1.0" ?>\n<bmap version="2.0">\n  <ImageSize>${2 * ranges * 4096}</ImageSize>\n  <BlockSize>4096</BlockSize>\n  <BlocksCount>${2 * ranges}</BlocksCount>\n  <MappedBlocksCount>${ranges}</MappedBlocksCount>\n  <ChecksumType>sha256</ChecksumType>\n  <BlockMap>\n${lines}  </BlockMap>\n</bmap>\n`,
  );
  sh(dir, `truncate -s ${2 * ranges * 4096} long.img`);
  return image;
}

describe('probing in the probe process', () => {
  let dir: string;
  beforeAll(() => {
    dir = scratchDir();
    osImage(dir, 64 * MiB);
    sh(dir, 'xz -T2 -c os.img > os.img.xz');
  });
  afterAll(() => cleanupLoops());

  it('an answer about another image than the one asked for is refused: a subverted probe cannot choose what is opened (as root under sudo)', async () => {
    const image = join(dir, 'os.img.xz');
    const prepared = await prepareImage({ image, partitions: false });
    // Honest: accepted as it came.
    expect(checkedAnswer({ image }, JSON.parse(JSON.stringify({ type: 'prepared', prepared })))).toEqual(prepared);
    // The same answer pointing the flash at another file, or claiming another source.
    const elsewhere = { ...prepared, plan: { ...prepared.plan, location: { kind: 'file', path: '/etc/shadow' } } };
    expect(
      checkedAnswer({ image }, JSON.parse(JSON.stringify({ type: 'prepared', prepared: elsewhere }))),
    ).toMatchObject({
      failure: { code: 'protocol-error', message: expect.stringContaining('another image (/etc/shadow)') },
    });
    const renamed = { ...prepared, info: { ...prepared.info, source: '/dev/nvme0n1' } };
    expect(checkedAnswer({ image }, JSON.parse(JSON.stringify({ type: 'prepared', prepared: renamed })))).toMatchObject(
      { failure: { code: 'protocol-error' } },
    );
  });

  it('an .img.xz: the answer is what the probe finds, checked on arrival, and the probe process peaks far below its cap', async () => {
    const image = join(dir, 'os.img.xz');
    const run = await watched(() => prepareImageInChild({ image, partitions: true }));
    expect(run.outcome.status).toBe('fulfilled');
    expect((run.outcome as PromiseFulfilledResult<unknown>).value).toEqual(
      await prepareImage({ image, partitions: true }),
    );
    expect(run.probes).toHaveLength(1);
    console.log(
      `probe of a 64 MiB .img.xz (partition table read through the decoder): peak RSS seen ${mb(peakOf(run.probes))}, ${run.ms.toFixed(0)} ms`,
    );
    expect(peakOf(run.probes)).toBeGreaterThan(0);
    expect(peakOf(run.probes)).toBeLessThan(RSS_CEILING);
  });

  it('a hostile qcow2 (one L2 table under every L1 entry) is refused within 5 s as damaged or hostile; the probe never held 256 MB and this process never stalled', async () => {
    const image = join(dir, 'shared-l2.qcow2');
    qcow2SharedL2Table(image);
    const run = await watched(() => prepareImageInChild({ image, partitions: true }));
    const failure = failureOf(run.outcome);
    console.log(
      `hostile qcow2: ${failure.code} after ${run.ms.toFixed(0)} ms, peak RSS seen ${mb(peakOf(run.probes))}, longest stall here ${run.longestStallMs.toFixed(0)} ms: ${failure.message}`,
    );
    // Today the probe runs out of memory on it (the memory watch stops it at about 235 MB; in the
    // app's own process it took 790 MB and 7 s before V8 gave up). A parser that learns to refuse
    // a shared L2 table refuses it sooner; either way it is damaged, it is quick, and it is bounded.
    expect(failure.code).toBe('source-corrupt');
    expect(run.ms).toBeLessThan(5000);
    expect(peakOf(run.probes)).toBeLessThan(RSS_CEILING);
    expect(run.longestStallMs).toBeLessThan(250);
    // Refused by the parser, the probe answers and then exits: nothing is left running.
    await expect.poll(() => run.pids.every(hasExited), { timeout: 2000 }).toBe(true);
  });

  describe('its limits, each made to be passed by an honest image and a lower limit', () => {
    let longBmapImage: string;
    beforeAll(() => {
      // 40,000 ranges, 3.7 MiB of XML, near the most bmap.ts accepts (about 43,000): tens of MiB of heap.
      longBmapImage = imageWithLongBmap(dir, 40_000);
    });
    const limits = (overrides: Partial<ProbeLimits>): ProbeLimits => ({ ...DEFAULT_PROBE_LIMITS.file, ...overrides });

    it('within the default limits, the long block map is read', async () => {
      const prepared = await prepareImageInChild({ image: longBmapImage, partitions: false });
      expect(prepared.info.blockMap).toMatchObject({ ranges: 40_000 });
    });

    it('the heap cap (--max-old-space-size): past it the probe is stopped, and the error says how much it was allowed', async () => {
      const run = await watched(() =>
        prepareImageInChild({ image: longBmapImage, partitions: false }, limits({ heapMiB: 16, memoryMiB: 4096 })),
      );
      const failure = failureOf(run.outcome);
      expect(failure).toEqual({
        code: 'source-corrupt',
        message: `${longBmapImage} is damaged or hostile: reading what it holds needed more than 16 MiB of memory, so Sluice stopped. Nothing was written.`,
      });
      expect(run.pids.every(hasExited)).toBe(true);
    });

    it.skipIf(process.platform !== 'linux')(
      'the memory watch (resident memory, which also counts buffers outside the heap): past it the probe is killed',
      async () => {
        const run = await watched(() =>
          prepareImageInChild({ image: longBmapImage, partitions: false }, limits({ memoryMiB: 96 })),
        );
        const failure = failureOf(run.outcome);
        expect(failure).toEqual({
          code: 'source-corrupt',
          message: `${longBmapImage} is damaged or hostile: reading what it holds needed more than 96 MiB of memory, so Sluice stopped. Nothing was written.`,
        });
        expect(run.pids.every(hasExited)).toBe(true);
      },
    );

    it('the time limit of a file: a probe that stops answering (as one reading a disk that stopped would) is stopped after its time, and nothing is left running', async () => {
      // A FIFO with no writer served here once, until the probe refused FIFOs at once; a probe
      // process held still (SIGSTOP) is the same to the limit: no answer and no end.
      const image = join(dir, 'stuck.img');
      writeRandomFile(image, 1 * MiB);
      // Looked for every millisecond: the probe of this small image ends about 60 ms after its start.
      const stopper = (async () => {
        for (let pid = findDescendant(process.pid, isProbe); ; pid = findDescendant(process.pid, isProbe)) {
          if (pid !== null) return process.kill(pid, 'SIGSTOP');
          await new Promise((resolve) => setTimeout(resolve, 1));
        }
      })();
      const run = await watched(() => prepareImageInChild({ image }, limits({ timeMs: 1000 })));
      await stopper;
      const failure = failureOf(run.outcome);
      expect(failure).toEqual({
        code: 'source-corrupt',
        message: `Reading what ${image} holds took more than 1 s, so Sluice stopped: the image is damaged or hostile, or the disk it is on stopped answering. Nothing was written.`,
      });
      expect(run.ms).toBeGreaterThanOrEqual(1000);
      expect(run.ms).toBeLessThan(3000);
      expect(run.longestStallMs).toBeLessThan(250);
      expect(run.pids.length).toBe(1);
      expect(run.pids.every(hasExited)).toBe(true);
    });

    describe('a server that sends a download’s first bytes, then nothing', () => {
      let server: FileServer;
      let url: string;
      beforeAll(async () => {
        server = await serve((_request, response) => {
          response.writeHead(200, { 'Content-Length': String(64 * MiB) });
          response.write(Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]));
        });
        url = `${server.base}/os.img.xz`;
      });
      afterAll(() => server.close());

      it('the time limit of a download: the probe is stopped after its time, with words about the server', async () => {
        const run = await watched(() =>
          prepareImageInChild({ image: url }, { ...DEFAULT_PROBE_LIMITS.url, timeMs: 2000 }),
        );
        const failure = failureOf(run.outcome);
        expect(failure).toEqual({
          code: 'source-read-error',
          message: `Reading what ${url} holds took more than 2 s (a slow, stalled or hostile server), so Sluice stopped. Nothing was written; try again later.`,
        });
        expect(run.ms).toBeGreaterThanOrEqual(2000);
        expect(run.ms).toBeLessThan(4000);
        expect(run.pids.every(hasExited)).toBe(true);
      });
    });
  });
});
