/**
 * The flashing station's benchmark (issue 19): 4 cards throttled to 20 MB/s (blkio), inserted 2 s
 * apart into an armed `sluice station`. Each card is first written alone; the batch of four should
 * then take the slowest single card plus the 6 s of inserting, within 10%, if the jobs really run
 * in parallel; and the station with all its helpers should stay under 10% of a core.
 */
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StationLogEntry } from '../../common/domain/station.js';
import { MiB } from '../../common/domain/units.js';
import { CLI } from '../support/cli.js';
import { assertOwnedLoop, attachLoop, createLoop, detachLoop, writeRandomFile } from '../support/loop-device.js';
import { SD_CARD_BYTES_PER_SECOND, throttledGroup, throttleDevice } from '../support/throttle.js';
import { WATCH } from './formats.js';
import { watchProcesses } from './measure.js';

const CARDS = 4;
const INSERT_GAP_MS = 2000;
/** 20 s at 20 MB/s: long enough that what a card costs is the writing, not the start of its helper (about 0.25 s of CPU). */
const IMAGE_BYTES = 384 * MiB;
const CARD_BYTES = IMAGE_BYTES + 16 * MiB;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface StationRun {
  /** From the first card's insertion to the last card's log line. */
  seconds: number;
  cpuSeconds: number;
  /** CPU seconds of the decoding: the decoder processes and the system tools they run (a lower bound, see Measurement.cpuByLabel). */
  decodingCpuSeconds: number;
  /** CPU seconds by process label (formats.ts WATCH: cli, helper, decoder, tool), a lower bound like decodingCpuSeconds. */
  cpuByLabel: Map<string, number>;
  /** The whole run under /usr/bin/time: from start (arming) to exit. */
  wallSeconds: number;
  entries: StationLogEntry[];
}

/**
 * Arms a station (in `group`, so its helpers' writes are throttled) that takes only `backings`,
 * inserts them `gapMs` apart once it is armed, each throttled the moment it exists, and waits for
 * all of them to be logged.
 */
export async function stationRun(
  image: string,
  backings: readonly string[],
  group: string,
  log: string,
  gapMs: number,
  bytesPerSecond = SD_CARD_BYTES_PER_SECOND,
): Promise<StationRun> {
  const args = [
    'station',
    '--yes',
    '--json',
    '--virtual',
    '--count',
    String(backings.length),
    '--log',
    log,
    ...backings.flatMap((b) => ['--slots', b]),
    image,
  ];
  const script = `echo $$ > '${group}/cgroup.procs' && exec /usr/bin/time -f 'bench-time %e %U %S' "$@"`;
  const child = spawn('sh', ['-c', script, 'sh', process.execPath, CLI, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const watch = watchProcesses(child.pid ?? -1, WATCH);
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const armed = new Promise<void>((resolve) => {
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (stdout.includes('"type":"armed"')) resolve();
    });
  });
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
  await Promise.race([armed, closed]);
  const first = Date.now();
  const loops = [];
  for (const [i, backing] of backings.entries()) {
    if (i > 0) await sleep(gapMs);
    const loop = attachLoop(backing);
    assertOwnedLoop(loop.path);
    // Milliseconds after it appears; the station lists drives once a second and its helper starts in ~0.1 s.
    throttleDevice(group, loop.path, bytesPerSecond);
    loops.push(loop);
  }
  const code = await closed;
  const { cpuByLabel } = watch.stop();
  for (const loop of loops) detachLoop(loop.path);
  const time = /bench-time ([\d.]+) ([\d.]+) ([\d.]+)/.exec(stderr);
  if (code !== 0 || time === null)
    throw new Error(`sluice station failed (exit ${code ?? 'signal'}):\n${stderr}\n${stdout.slice(-2000)}`);
  const entries = readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as StationLogEntry)
    .filter((e) => backings.includes(e.slot));
  if (entries.length !== backings.length || entries.some((e) => e.result !== 'ok'))
    throw new Error(`not every card was written:\n${JSON.stringify(entries, null, 1)}`);
  const last = Math.max(...entries.map((e) => Date.parse(e.time)));
  return {
    seconds: (last - first) / 1000,
    cpuSeconds: Number(time[2]) + Number(time[3]),
    decodingCpuSeconds: (cpuByLabel.get('decoder') ?? 0) + (cpuByLabel.get('tool') ?? 0),
    cpuByLabel,
    wallSeconds: Number(time[1]),
    entries,
  };
}

export async function stationSection(dir: string): Promise<string> {
  const image = join(dir, 'station.img');
  writeRandomFile(image, IMAGE_BYTES);
  const backings = Array.from({ length: CARDS }, (_, i) => join(dir, `station-card-${i}.img`));
  // Allocated backing files, as createLoop's 'allocated': the first write costs what later writes cost.
  for (const backing of backings) execFileSync('fallocate', ['--length', String(CARD_BYTES), backing]);
  const group = throttledGroup(createLoop({ size: MiB, dir }).path, SD_CARD_BYTES_PER_SECOND);
  try {
    const singles = [];
    for (const [i, backing] of backings.entries())
      singles.push(await stationRun(image, [backing], group.dir, join(dir, `station-single-${i}.jsonl`), 0));
    const slowest = Math.max(...singles.map((s) => s.seconds));
    const batch = await stationRun(image, backings, group.dir, join(dir, 'station-batch.jsonl'), INSERT_GAP_MS);
    const budget = slowest + ((CARDS - 1) * INSERT_GAP_MS) / 1000;
    const singleCpu = singles.map((s) => (100 * s.cpuSeconds) / s.wallSeconds);
    return [
      `### Flashing station: ${CARDS} cards at 20 MB/s (blkio-throttled loops), ${IMAGE_BYTES / MiB} MiB raw image, inserted ${INSERT_GAP_MS / 1000} s apart`,
      '',
      '| run | insert → last log line, s | CPU s (station + helpers) | CPU % of a core (whole run) |',
      '|---|---:|---:|---:|',
      ...singles.map(
        (s, i) =>
          `| card ${i + 1} alone | ${s.seconds.toFixed(1)} | ${s.cpuSeconds.toFixed(2)} | ${(singleCpu[i] ?? 0).toFixed(1)} |`,
      ),
      `| **all ${CARDS}, ${INSERT_GAP_MS / 1000} s apart** | **${batch.seconds.toFixed(1)}** | ${batch.cpuSeconds.toFixed(2)} | **${((100 * batch.cpuSeconds) / batch.wallSeconds).toFixed(1)}** |`,
      '',
      `Slowest single card ${slowest.toFixed(1)} s + ${((CARDS - 1) * INSERT_GAP_MS) / 1000} s of inserting = ${budget.toFixed(1)} s; the batch took ${batch.seconds.toFixed(1)} s: **${((100 * batch.seconds) / budget).toFixed(0)}%** of it (target ≤ 110%).`,
      `Write / verify speed logged per card in the batch: ${batch.entries.map((e) => `${((e.writeSpeed ?? 0) / 1e6).toFixed(1)} / ${((e.verifySpeed ?? 0) / 1e6).toFixed(0)} MB/s`).join(', ')}.`,
    ].join('\n');
  } finally {
    group.remove();
  }
}
