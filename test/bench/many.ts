/**
 * Many cards from one `sluice flash` (section `many`): 1, 4, 8, 16 and 32 cards at 8 MB/s
 * (blkio-throttled loops, one rule per card in one group) from an OS-like .xz, each as a ratio to
 * the one-card time; then two fast cards (16 MB/s) beside a slow one (2 MB/s), each fast card
 * against its own time alone; then a station of 16 cards inserted 0.2 s apart, against a station
 * of one. The reference is the hardware: N cards should take the time of one.
 *
 * The image is 128 MiB rather than the 1 GiB of the other sections: at card speeds the 1 GiB one
 * takes about a minute a run, and this section makes seven runs plus three alone.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { MiB } from '../../common/domain/units.js';
import { CLI } from '../support/cli.js';
import { assertOwnedLoop, createLoop, type LoopDevice } from '../support/loop-device.js';
import { osImage, sh } from '../support/os-image.js';
import { throttledCards, throttledGroup } from '../support/throttle.js';
import { stationRun, type StationRun } from './station.js';
import { WATCH } from './formats.js';
import { measure, type Measurement } from './measure.js';
import { readmeRow } from './headlines.js';

const IMAGE_BYTES = 128 * MiB;
const CARD_BYTES = IMAGE_BYTES + 16 * MiB;
const COUNTS = [1, 4, 8, 16, 32];
const CARD_SPEED = 8_000_000;
const FAST_SPEED = 16_000_000;
const SLOW_SPEED = 2_000_000;
const NODE = process.execPath;
/** The issue's acceptance: N cards' time over one card's. */
const LIMITS: Record<number, number> = { 16: 1.1, 32: 1.2 };
const MIXED_LIMIT = 1.3;
const STATION_CARDS = 16;
const STATION_GAP_MS = 200;
const STATION_LIMIT = 1.15;
/** Decoding CPU of the 16-card station over a one-card station's. */
const DECODING_LIMIT = 1.3;
/** The README's table of this section (`<!-- bench:many-cards -->`). */
const README_TABLE = 'many-cards';
/** 16 MB plus 6 MB per card, private, for the writing process. */
const memoryLimit = (cards: number) => 16e6 + 6e6 * cards;

/** The image, as an OS image is published: GPT, FAT32 boot, ext4 root, a firmware blob, then xz. */
function fixture(dir: string): { raw: string; xz: string } {
  const raw = osImage(dir, IMAGE_BYTES, 'many.img', { fat32: true, rawPartition: 24 * MiB });
  sh(dir, 'xz -T2 -6 -k many.img');
  return { raw, xz: `${raw}.xz` };
}

async function flashRun(image: string, loops: readonly LoopDevice[], cgroup: string): Promise<Measurement> {
  loops.forEach((l) => assertOwnedLoop(l.path));
  const m = await measure(`${NODE} ${CLI} flash --yes --json ${image} ${loops.map((l) => l.path).join(' ')}`, {
    cgroup,
    watch: WATCH,
  });
  if (m.exitCode !== 0)
    throw new Error(`sluice flash to ${loops.length} cards failed (exit ${m.exitCode}):\n${m.output.slice(-3000)}`);
  return m;
}

/** Each target's own time to a verified card, as its result says (from the job's start in the helper). */
function secondsByTarget(m: Measurement): Map<string, number> {
  const seconds = new Map<string, number>();
  for (const line of m.output.split('\n')) {
    if (!line.startsWith('{"type":"result"')) continue;
    const event = JSON.parse(line) as { target: string; seconds?: number };
    if (event.seconds !== undefined) seconds.set(event.target, event.seconds);
  }
  return seconds;
}

const mb = (bytes: number | undefined) => (bytes === undefined ? '' : (bytes / 1e6).toFixed(1));
const megabytes = (bytes: number | undefined) => (bytes === undefined ? '' : `${Math.round(bytes / 1e6)} MB`);
const verdict = (bound: string, met: boolean) => `acceptance: ${bound} — ${met ? 'met' : 'not met'}`;

/** The README's row for `count` cards: time and CPU, with their ratios to one card's, and the helper's memory. */
function countsRow(count: number, m: Measurement, one: Measurement): string {
  const against = (ours: number, theirs: number) => (count === 1 ? '' : ` (${(ours / theirs).toFixed(2)}×)`);
  return readmeRow(README_TABLE, [
    `${count} card${count === 1 ? '' : 's'}`,
    `${m.wallSeconds.toFixed(1)} s${against(m.wallSeconds, one.wallSeconds)}`,
    `${m.cpuSeconds.toFixed(1)} s${against(m.cpuSeconds, one.cpuSeconds)}`,
    megabytes(m.privatePeaks.get('helper')),
  ]);
}

async function countsTable(image: string, loops: readonly LoopDevice[], cgroup: string): Promise<string[]> {
  const lines = [
    `| cards | wall s | ratio to one card | CPU s (whole run) | CPU s, helper | helper private MB (limit) | verdict |`,
    '|---:|---:|---:|---:|---:|---:|---|',
  ];
  let one: Measurement | null = null;
  let last: Measurement | null = null;
  for (const count of COUNTS) {
    const m = await flashRun(image, loops.slice(0, count), cgroup);
    one ??= m;
    const ratio = m.wallSeconds / one.wallSeconds;
    const privateBytes = m.privatePeaks.get('helper');
    const limit = LIMITS[count];
    const checks = [
      limit === undefined ? '' : verdict(`≤ ${limit}×`, ratio <= limit),
      count >= 16 && privateBytes !== undefined
        ? `memory ${privateBytes <= memoryLimit(count) ? 'met' : 'not met'}`
        : '',
    ]
      .filter(Boolean)
      .join('; ');
    lines.push(
      `| ${count} | ${m.wallSeconds.toFixed(2)} | ${ratio.toFixed(2)}× | ${m.cpuSeconds.toFixed(2)} | ${(m.cpuByLabel.get('helper') ?? 0).toFixed(2)} | ${mb(privateBytes)} (${mb(memoryLimit(count))}) | ${checks} |`,
    );
    if (count === 1 || limit !== undefined) lines.push(countsRow(count, m, one));
    last = m;
  }
  // CPU seconds are the figure that holds on a busy machine, where wall time does not.
  if (one !== null && last !== null && last !== one) {
    const extra = Math.max(...COUNTS) - 1;
    lines.push(
      '',
      `Each card after the first costs ${((last.cpuSeconds - one.cpuSeconds) / extra).toFixed(2)} CPU s (whole run), ${(((last.cpuByLabel.get('helper') ?? 0) - (one.cpuByLabel.get('helper') ?? 0)) / extra).toFixed(2)} s of it in the one helper.`,
    );
  }
  return lines;
}

/** Two fast cards beside a slow one, from `image`; each fast card's time against its time alone. */
async function mixedLines(
  name: string,
  image: string,
  fast: readonly LoopDevice[],
  slow: LoopDevice,
  cgroup: string,
): Promise<{ lines: string[]; ratios: number[] }> {
  const lines: string[] = [];
  const ratios: number[] = [];
  const alone = new Map<string, number>();
  for (const loop of fast)
    alone.set(loop.path, secondsByTarget(await flashRun(image, [loop], cgroup)).get(loop.path) ?? Number.NaN);
  const mixed = await flashRun(image, [...fast, slow], cgroup);
  const together = secondsByTarget(mixed);
  for (const [i, loop] of fast.entries()) {
    const a = alone.get(loop.path) ?? Number.NaN;
    const t = together.get(loop.path) ?? Number.NaN;
    ratios.push(t / a);
    lines.push(
      `| ${name}, fast card ${i + 1} | ${a.toFixed(2)} | ${t.toFixed(2)} | ${(t / a).toFixed(2)}× | ${verdict(`≤ ${MIXED_LIMIT}×`, t / a <= MIXED_LIMIT)} |`,
    );
  }
  lines.push(
    `| ${name}, the slow card | | ${(together.get(slow.path) ?? Number.NaN).toFixed(2)} | | whole run ${mixed.wallSeconds.toFixed(2)} s, ${mixed.cpuSeconds.toFixed(2)} s CPU, helper ${mb(mixed.privatePeaks.get('helper'))} MB private |`,
  );
  return { lines, ratios };
}

/** A station of STATION_CARDS cards inserted STATION_GAP_MS apart, against a station of one card. */
async function stationLines(dir: string, xz: string): Promise<string[]> {
  const backings = Array.from({ length: STATION_CARDS }, (_, i) => join(dir, `many-station-${i}.img`));
  for (const backing of backings) execFileSync('truncate', ['-s', String(CARD_BYTES), backing]);
  const group = throttledGroup(createLoop({ size: MiB, dir }).path, CARD_SPEED);
  try {
    const one = await stationRun(xz, backings.slice(0, 1), group.dir, join(dir, 'many-station-1.jsonl'), 0, CARD_SPEED);
    const all = await stationRun(
      xz,
      backings,
      group.dir,
      join(dir, 'many-station-all.jsonl'),
      STATION_GAP_MS,
      CARD_SPEED,
    );
    const budget = one.seconds + ((STATION_CARDS - 1) * STATION_GAP_MS) / 1000;
    const ratio = all.seconds / budget;
    const decoding = all.decodingCpuSeconds / one.decodingCpuSeconds;
    const helperCpu = (run: StationRun) => run.cpuByLabel.get('helper') ?? 0;
    // CPU seconds are the figure that holds on a busy machine, where wall time does not.
    const perCard = (all.cpuSeconds - one.cpuSeconds) / (STATION_CARDS - 1);
    return [
      "| run | first insertion → last log line, s | whole run s (arming to exit) | CPU s (station, decoding, helpers) | decoding CPU s | CPU s of the cards' helpers | verdict |",
      '|---|---:|---:|---:|---:|---:|---|',
      `| 1 card | ${one.seconds.toFixed(2)} | ${one.wallSeconds.toFixed(2)} | ${one.cpuSeconds.toFixed(2)} | ${one.decodingCpuSeconds.toFixed(2)} | ${helperCpu(one).toFixed(2)} | |`,
      `| ${STATION_CARDS} cards, ${STATION_GAP_MS / 1000} s apart | ${all.seconds.toFixed(2)} | ${all.wallSeconds.toFixed(2)} | ${all.cpuSeconds.toFixed(2)} | ${all.decodingCpuSeconds.toFixed(2)} | ${helperCpu(all).toFixed(2)} | ${ratio.toFixed(2)}× (one card + the insertion spread, ${budget.toFixed(2)} s); ${verdict(`≤ ${STATION_LIMIT}×`, ratio <= STATION_LIMIT)}. Decoding CPU ${decoding.toFixed(2)}× one card's; ${verdict(`≤ ${DECODING_LIMIT}×`, decoding <= DECODING_LIMIT)} |`,
      '',
      `Each card after the first costs ${perCard.toFixed(2)} CPU s (whole run), ${((helperCpu(all) - helperCpu(one)) / (STATION_CARDS - 1)).toFixed(2)} s of it in its own helper process.`,
      readmeRow(README_TABLE, [
        `station, ${STATION_CARDS} cards inserted ${STATION_GAP_MS / 1000} s apart`,
        `${ratio.toFixed(2)}× one card plus the ${((STATION_CARDS - 1) * STATION_GAP_MS) / 1000} s of inserting`,
        `decoding ${decoding.toFixed(2)}× one card's`,
        '',
      ]),
    ];
  } finally {
    group.remove();
  }
}

export async function manySection(dir: string): Promise<string> {
  const { raw, xz } = fixture(dir);
  const loops = Array.from({ length: Math.max(...COUNTS) }, () =>
    createLoop({ size: CARD_BYTES, dir, fill: 'sparse' }),
  );
  const even = throttledCards(loops.map((loop) => ({ device: loop.path, bytesPerSecond: CARD_SPEED })));
  const fast = [
    createLoop({ size: CARD_BYTES, dir, fill: 'sparse' }),
    createLoop({ size: CARD_BYTES, dir, fill: 'sparse' }),
  ];
  const slow = createLoop({ size: CARD_BYTES, dir, fill: 'sparse' });
  const uneven = throttledCards([
    ...fast.map((loop) => ({ device: loop.path, bytesPerSecond: FAST_SPEED })),
    { device: slow.path, bytesPerSecond: SLOW_SPEED },
  ]);
  try {
    const counts = await countsTable(xz, loops, even.dir);
    const runs = [
      await mixedLines('.xz', xz, fast, slow, uneven.dir),
      await mixedLines('raw .img', raw, fast, slow, uneven.dir),
    ];
    const ratios = runs.flatMap((run) => run.ratios);
    const mixed = [
      ...runs.flatMap((run) => run.lines),
      '',
      readmeRow(README_TABLE, [
        `2 cards at ${FAST_SPEED / 1e6} MB/s beside one at ${SLOW_SPEED / 1e6} MB/s`,
        `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}× each fast card's time alone`,
        '',
        '',
      ]),
    ];
    return [
      `### Many cards: one \`sluice flash\`, ${IMAGE_BYTES / MiB} MiB OS-like image as .xz, cards at ${CARD_SPEED / 1e6} MB/s (blkio-throttled loops)`,
      '',
      ...counts,
      '',
      `### Mixed speeds: two cards at ${FAST_SPEED / 1e6} MB/s beside one at ${SLOW_SPEED / 1e6} MB/s (each card's own seconds to verified, from its result)`,
      '',
      '| run | alone s | beside the slow card s | ratio | verdict |',
      '|---|---:|---:|---:|---|',
      ...mixed,
      '',
      `### A station: ${STATION_CARDS} cards at ${CARD_SPEED / 1e6} MB/s inserted ${STATION_GAP_MS / 1000} s apart, the same .xz (decoded once, at arming)`,
      '',
      ...(await stationLines(dir, xz)),
    ].join('\n');
  } finally {
    even.remove();
    uneven.remove();
  }
}
