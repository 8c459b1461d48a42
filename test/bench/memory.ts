/**
 * The "memory" section of `npm run bench` (BENCH_SECTIONS=memory runs it alone). It measures issue
 * 16's standing target: the helper's private memory (Private_Dirty in /proc/PID/smaps_rollup) is
 * ≤ 16 MB and stays flat from a 256 MiB image to a 16 GiB one, with its RSS beside it. Each raw
 * image is flashed by `sluice flash` to the same loop device, so only the image's size changes
 * between rows. A 16 GiB image and its drive do not fit on /dev/shm beside what the machine runs,
 * so both live in a scratch directory on /var/tmp (the disk), removed when the section ends.
 */
import { execFileSync, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { GiB, MiB } from '../../common/domain/units.js';
import { HELPER_V8_FLAGS } from '../../user/launcher/helper-program.js';
import { HEAD_BYTES } from '../../writer/flash.js';
import { DEFAULT_REQUEST } from '../../writer/pump.js';
import { CLI } from '../support/cli.js';
import {
  assertOwnedLoop,
  createLoop,
  detachLoop,
  scratchDir,
  writeRandomFile,
  type LoopDevice,
} from '../support/loop-device.js';
import { WATCH } from './formats.js';
import { issueVerdict, measure, medianOf, privateDirty, type Measurement } from './measure.js';

const IMAGE_SIZES = [256 * MiB, 1 * GiB, 4 * GiB, 16 * GiB];
/** Issue 16's target for the helper's Private_Dirty, in the bench's MB (10^6 bytes). */
const TARGET_BYTES = 16e6;
const DISK_SCRATCH_PARENT = '/var/tmp';

const mb = (bytes: number) => (bytes / 1e6).toFixed(1);
const sizeName = (bytes: number) => (bytes >= GiB ? `${bytes / GiB} GiB` : `${bytes / MiB} MiB`);

interface Row {
  bytes: number;
  m: Measurement;
  helperPrivate: number;
  load: number;
}

async function flashEach(node: string, dir: string, loop: LoopDevice): Promise<Row[]> {
  const image = join(dir, 'memory.img');
  const rows: Row[] = [];
  for (const bytes of IMAGE_SIZES) {
    // Random bytes, so that nothing can be left out as zeros or free space. Node's generator fills
    // about 8 GB/s here, so the disk (about 1.9 GB/s) sets the cost: some 9 s for 16 GiB.
    writeRandomFile(image, bytes);
    // The image's own writeback would compete with the flash on the same disk and make its wall time say nothing.
    execFileSync('sync');
    const m = await medianOf(1, () =>
      measure(`${node} ${CLI} flash --yes --no-eject ${image} ${loop.path}`, { watch: WATCH }),
    );
    const helperPrivate = m.privatePeaks.get('helper');
    if (helperPrivate === undefined)
      throw new Error(`the helper process of the ${sizeName(bytes)} flash was never seen:\n${m.output}`);
    rows.push({ bytes, m, helperPrivate, load: loadavg()[0] ?? 0 });
    rmSync(image);
  }
  return rows;
}

/**
 * Private_Dirty of a Node started as the helper is (its V8 flags) that runs nothing of Sluice's,
 * read from outside once, 500 ms after its start (the helper's figure is the largest of its reads
 * every 100 ms; an idle Node's does not move): median of 5. Read from inside, by a script, it was
 * 1 MB more (the script and what it loads).
 */
async function nodeAlonePrivate(node: string): Promise<number> {
  const runs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const child = spawn(node, [...HELPER_V8_FLAGS, '-e', 'setTimeout(() => {}, 5000)'], { stdio: 'ignore' });
    const exited = new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', () => resolve());
    });
    try {
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 500))]);
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`a bare Node (${node}) ended before it could be measured`);
      const bytes = child.pid === undefined ? 0 : privateDirty(child.pid);
      if (bytes === 0) throw new Error('no Private_Dirty for a bare Node');
      runs.push(bytes);
    } finally {
      child.kill();
      await exited.catch(() => undefined);
    }
  }
  return runs.sort((a, b) => a - b)[2] ?? 0;
}

export async function memorySection(node: string): Promise<string> {
  const dir = scratchDir(DISK_SCRATCH_PARENT);
  let rows: Row[];
  try {
    const loop = createLoop({ size: Math.max(...IMAGE_SIZES) + 64 * MiB, dir, fill: 'allocated' });
    try {
      assertOwnedLoop(loop.path);
      rows = await flashEach(node, dir, loop);
    } finally {
      detachLoop(loop.path);
    }
  } finally {
    // 16 GiB of image and 16 GiB of drive on the machine's disk: gone now, not when the bench ends.
    rmSync(dir, { recursive: true, force: true });
  }
  const privates = rows.map((row) => row.helperPrivate);
  const largest = Math.max(...privates);
  const nodeAlone = await nodeAlonePrivate(node);
  // What a flash's buffer holds at the least (flash.ts): the pump's two requests and the head kept to be written last.
  const buffer = 2 * DEFAULT_REQUEST + HEAD_BYTES;
  return [
    `### The helper's memory against the image's size: raw images (random bytes) to a ${sizeName(Math.max(...IMAGE_SIZES))} loop device on ${DISK_SCRATCH_PARENT}, \`sluice flash --yes --no-eject\`, one run each`,
    '',
    '| image | wall s | helper private MB (peak Private_Dirty) | helper peak RSS MB | CPU s (whole run) | load average (1 min) after |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      ({ bytes, m, helperPrivate, load }) =>
        `| ${sizeName(bytes)} | ${m.wallSeconds.toFixed(2)} | ${mb(helperPrivate)} | ${mb(m.peaks.get('helper') ?? 0)} | ${m.cpuSeconds.toFixed(2)} | ${load.toFixed(2)} |`,
    ),
    '',
    `Helper's private memory from ${sizeName(Math.min(...IMAGE_SIZES))} to ${sizeName(Math.max(...IMAGE_SIZES))}: spread **${mb(largest - Math.min(...privates))} MB** (max − min), largest **${mb(largest)} MB**; ` +
      issueVerdict('target', `≤ ${mb(TARGET_BYTES)} MB, flat`, largest <= TARGET_BYTES),
    '',
    `What of it is not the helper's own: Node itself, started with the helper's V8 flags and running nothing, **${mb(nodeAlone)} MB**; ` +
      `the job's one buffer (two ${DEFAULT_REQUEST / MiB} MiB requests and the ${HEAD_BYTES / MiB} MiB head written last) ${mb(buffer)} MB. ` +
      `Together ${mb(nodeAlone + buffer)} MB of the ${mb(TARGET_BYTES)} MB target, which leaves ${mb(TARGET_BYTES - nodeAlone - buffer)} MB for the helper's code, the Node built-ins it loads and its heap; they take ${mb(largest - nodeAlone - buffer)} MB.`,
  ].join('\n');
}
