/**
 * `npm run bench`: Sluice against the tools people compare it with, in the same run, on the same
 * loop device, as whole processes (start-up included). Prints a markdown table of wall time,
 * throughput, peak RSS, CPU and the ratio to the reference. Needs root (loop devices, cgroups);
 * writes only to loop devices it creates itself.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { GiB, MiB } from '../../common/domain/units.js';
import { allocateJobMemory } from '../../writer/job-memory.js';
import { CLI } from '../support/cli.js';
import { assertOwnedLoop, cleanupLoops, createLoop, scratchDir, writeRandomFile } from '../support/loop-device.js';
import { throttledGroup } from '../support/throttle.js';
import { writeBenchmarksPage } from './benchmarks-page.js';
import { catalogueSection } from './catalogue.js';
import { headline, writeReadmeHeadlines } from './headlines.js';
import { fileSections } from './file-targets.js';
import { usedBlocksBackupSection } from './used-blocks-backup.js';
import { customiseSection } from './customise.js';
import { formatSections, WATCH, WRITER_PRIVATE_HEADER, writerPrivateBytes } from './formats.js';
import { sparseRows } from './sparse.js';
import { checkSection } from './check.js';
import { stationSection } from './station.js';
import { manySection } from './many.js';
import { issueVerdict, measure, medianOf, mediansInTurns, type Measurement } from './measure.js';
import { memorySection } from './memory.js';
import { OS_IMAGE_BYTES } from './os-like-image.js';

const RUNS = Number(process.env['BENCH_RUNS'] ?? 3);
/** The bench's sections, in the order they run and appear in docs/benchmarks.md. */
const ALL_SECTIONS = [
  'startup',
  'raw',
  'slow',
  'sparse',
  'formats',
  'files',
  'backup',
  'check',
  'customise',
  'catalogue',
  'station',
  'many',
  'memory',
] as const;
/**
 * Which sections to run (BENCH_SECTIONS, comma-separated); all by default but `memory`, which runs
 * only when named: it writes 16 GiB to this machine's disk and needs 32 GiB free under /var/tmp.
 */
const SECTIONS = process.env['BENCH_SECTIONS']?.split(',') ?? ALL_SECTIONS.filter((name) => name !== 'memory');
/** Bytes of the image and drives in the "files" section (BENCH_FILE_BYTES; default 1 GiB). */
const FILE_BYTES = Number(process.env['BENCH_FILE_BYTES'] ?? GiB);
/** The 1 GiB OS-like image and its compressed forms, kept between runs: making them takes minutes. */
const FIXTURES = process.env['BENCH_FIXTURES'] ?? '/var/tmp/sluice-bench-fixtures';
const RAW_IMAGE_BYTES = 1 * GiB;
/** Issue 16's standing target for the raw section: Sluice's speed over etcher-sdk's, in the same run. */
const RAW_TARGET_AGAINST_ETCHER = 1.6;
/** And for the card section: the whole 1 GiB run's CPU, start-up included, in % of one core. */
const CPU_TARGET_PERCENT = 1;
/** The card section's two images: the issue's target is CPU for 1 GiB to a 20 MB/s card, start-up included. */
const SLOW_SMALL_BYTES = 256 * MiB;
const SLOW_LARGE_BYTES = 1 * GiB;
const SD_CARD_BYTES_PER_SECOND = 20 * 1000 * 1000;
const ETCHER = join(import.meta.dirname, 'etcher-flash.js');
/**
 * Another build's CLI (BENCH_BASELINE_CLI, e.g. a worktree of an earlier commit, built), run beside
 * this one in the raw and format rows: a change is measured against what it changed, in one run.
 */
const BASELINE_CLI = process.env['BENCH_BASELINE_CLI'];
const NODE = process.execPath;
/**
 * etcher-sdk's mountutils is not N-API: `npm install` compiles it for the Node that runs npm, which
 * is not always the Node 24 our scripts use. It runs under that same Node (npm tells us which).
 */
const ETCHER_NODE = process.env['npm_node_execpath'] ?? NODE;
/** `npm run bench -- --write-docs`: the tables also become docs/benchmarks.md, and its headlines the README's comparison table; neither is edited by hand. */
const WRITE_DOCS = process.argv.includes('--write-docs');
const BENCHMARKS_PAGE = resolve('docs/benchmarks.md');
/** Its comparison table is rebuilt from the page's headlines (headlines.ts). */
const README = resolve('README.md');

interface Row {
  name: string;
  m: Measurement;
  bytes: number;
  reference?: Measurement;
}

/**
 * etcher-sdk is the bench's own package (test/bench/package.json), so that `npm install` of Sluice
 * builds none of its native modules; the first bench that compares with it installs it, with the
 * npm (and so for the Node, ETCHER_NODE) that runs the bench.
 */
function installEtcherSdk(): void {
  if (existsSync('test/bench/node_modules/etcher-sdk/package.json')) return;
  process.stderr.write('Installing the comparison, etcher-sdk, into test/bench/node_modules (once)…\n');
  execFileSync('npm', ['ci', '--prefix', 'test/bench', '--no-audit', '--no-fund'], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}

function etcherNodeVersion(): string {
  return execFileSync(ETCHER_NODE, ['--version'], { encoding: 'utf8' }).trim();
}

const mb = (bytes: number) => (bytes / 1e6).toFixed(0);

/** A table of rows; the private-memory column appears where some row watched its writer (WATCH). */
function table(title: string, rows: Row[]): string {
  const watched = rows.some(({ m }) => writerPrivateBytes(m) !== undefined);
  const lines = [
    `### ${title}`,
    '',
    `| run | wall s | MB/s | peak RSS MB |${watched ? ` ${WRITER_PRIVATE_HEADER} |` : ''} CPU s | CPU % of a core | speed vs reference |`,
    `|---|---:|---:|---:|${watched ? '---:|' : ''}---:|---:|---:|`,
  ];
  for (const { name, m, bytes, reference } of rows) {
    const ratio = reference === undefined ? '' : `${(reference.wallSeconds / m.wallSeconds).toFixed(2)}×`;
    const writerPrivate = writerPrivateBytes(m);
    const privateCell = watched ? ` ${writerPrivate === undefined ? '' : mb(writerPrivate)} |` : '';
    lines.push(
      `| ${name} | ${m.wallSeconds.toFixed(2)} | ${mb(bytes / m.wallSeconds)} | ${mb(m.peakRssBytes)} |${privateCell} ${m.cpuSeconds.toFixed(2)} | ${((100 * m.cpuSeconds) / m.wallSeconds).toFixed(1)} | ${ratio} |`,
    );
  }
  return lines.join('\n');
}

/** XXH64 over the job memory, 4 MiB at a time, as the writer uses it. */
function hashThroughput(): number {
  const memory = allocateJobMemory(4 * MiB);
  memory.bytes.fill(0x5a);
  for (let i = 0; i < 64; i++) memory.hash(memory.bytes);
  const rounds = 512;
  const t = performance.now();
  for (let i = 0; i < rounds; i++) memory.hash(memory.bytes);
  return (rounds * 4 * MiB) / ((performance.now() - t) / 1000);
}

const RAW_JOB = `${RAW_IMAGE_BYTES / GiB} GiB raw image, write and verify`;

async function rawSection(dir: string): Promise<string> {
  const image = join(dir, 'raw.img');
  writeRandomFile(image, RAW_IMAGE_BYTES);
  const loop = createLoop({ size: RAW_IMAGE_BYTES + 64 * MiB, dir, fill: 'allocated' });
  assertOwnedLoop(loop.path);
  const sluice = () => measure(`${NODE} ${CLI} flash --yes ${image} ${loop.path}`, { watch: WATCH });
  // The reference a careful user would type: direct writes, then a direct read-back compared byte for byte.
  const ddVerify = () =>
    measure(
      `dd if=${image} of=${loop.path} bs=4M oflag=direct conv=fsync status=none && ` +
        `dd if=${loop.path} bs=4M iflag=direct,count_bytes count=${RAW_IMAGE_BYTES} status=none | cmp - ${image}`,
    );
  const etcher = () => measure(`${ETCHER_NODE} ${ETCHER} ${image} ${loop.path}`, { watch: WATCH });
  const baselineRun =
    BASELINE_CLI === undefined
      ? []
      : [() => measure(`${NODE} ${BASELINE_CLI} flash --yes ${image} ${loop.path}`, { watch: WATCH })];
  const [dd, ours, theirs, baselineM] = (await mediansInTurns(RUNS, [ddVerify, sluice, etcher, ...baselineRun])) as [
    Measurement,
    Measurement,
    Measurement,
    Measurement | undefined,
  ];
  const baseline =
    baselineM === undefined
      ? []
      : [{ name: `sluice flash, baseline (${BASELINE_CLI})`, m: baselineM, bytes: RAW_IMAGE_BYTES, reference: dd }];
  const againstEtcher = theirs.wallSeconds / ours.wallSeconds;
  return [
    table(
      `Raw ${RAW_IMAGE_BYTES / GiB} GiB image, write + verify, loop device on /dev/shm (median of ${RUNS}, run in turns)`,
      [
        { name: '`dd bs=4M oflag=direct` + O_DIRECT read-back `cmp`', m: dd, bytes: RAW_IMAGE_BYTES },
        { name: '**sluice flash**', m: ours, bytes: RAW_IMAGE_BYTES, reference: dd },
        ...baseline,
        {
          name: `etcher-sdk 10 (decompressThenFlash, verify; Node ${etcherNodeVersion()})`,
          m: theirs,
          bytes: RAW_IMAGE_BYTES,
          reference: dd,
        },
      ],
    ),
    '',
    `Sluice against etcher-sdk: **${againstEtcher.toFixed(2)}×** its speed; ${issueVerdict('target', `≥ ${RAW_TARGET_AGAINST_ETCHER}×`, againstEtcher >= RAW_TARGET_AGAINST_ETCHER)}`,
    headline(RAW_JOB, "etcher-sdk 10 (balenaEtcher's engine)", theirs.wallSeconds, ours.wallSeconds),
    headline(RAW_JOB, '`dd oflag=direct` + direct read-back `cmp`', dd.wallSeconds, ours.wallSeconds),
  ].join('\n');
}

/**
 * CPU while writing to a 20 MB/s card. Two image sizes are flashed; the difference in CPU time over
 * the difference in wall time is the steady-state cost of writing, without the fixed cost of
 * starting two Node processes and verifying, which a short run would otherwise be dominated by.
 * The large run's CPU over its wall time is the same cost with start-up and verification included.
 */
async function slowCardSection(dir: string): Promise<string> {
  const small = join(dir, 'slow-small.img');
  const large = join(dir, 'slow-large.img');
  writeRandomFile(small, SLOW_SMALL_BYTES);
  writeRandomFile(large, SLOW_LARGE_BYTES);
  const loop = createLoop({ size: SLOW_LARGE_BYTES + 16 * MiB, dir, fill: 'allocated' });
  assertOwnedLoop(loop.path);
  const group = throttledGroup(loop.path, SD_CARD_BYTES_PER_SECOND);
  // Watched for the split by process (cpuSplit); the watcher's own reading of /proc is the bench's CPU, not the run's.
  const sluice = (image: string) =>
    measure(`${NODE} ${CLI} flash --yes ${image} ${loop.path}`, { cgroup: group.dir, watch: WATCH });
  const dd = (image: string, bytes: number) =>
    measure(
      `dd if=${image} of=${loop.path} bs=4M oflag=direct conv=fsync status=none && ` +
        `dd if=${loop.path} bs=4M iflag=direct,count_bytes count=${bytes} status=none | cmp - ${image}`,
      { cgroup: group.dir },
    );
  const marginal = (a: Measurement, b: Measurement) =>
    ((100 * (b.cpuSeconds - a.cpuSeconds)) / (b.wallSeconds - a.wallSeconds)).toFixed(1);
  const whole = (m: Measurement) => ((100 * m.cpuSeconds) / m.wallSeconds).toFixed(1);
  try {
    const oursSmall = await medianOf(1, () => sluice(small));
    const oursLarge = await medianOf(1, () => sluice(large));
    const ddSmall = await medianOf(1, () => dd(small, SLOW_SMALL_BYTES));
    const ddLarge = await medianOf(1, () => dd(large, SLOW_LARGE_BYTES));
    return [
      table(`A 20 MB/s card (blkio-throttled loop), raw image, write + verify`, [
        { name: `\`dd\` + read-back \`cmp\`, ${SLOW_LARGE_BYTES / MiB} MiB`, m: ddLarge, bytes: SLOW_LARGE_BYTES },
        {
          name: `**sluice flash**, ${SLOW_LARGE_BYTES / MiB} MiB`,
          m: oursLarge,
          bytes: SLOW_LARGE_BYTES,
          reference: ddLarge,
        },
      ]),
      '',
      `CPU while writing at 20 MB/s (extra CPU over extra wall time between ${SLOW_SMALL_BYTES / MiB} and ${SLOW_LARGE_BYTES / MiB} MiB images): ` +
        `**sluice ${marginal(oursSmall, oursLarge)}% of a core**, dd + cmp ${marginal(ddSmall, ddLarge)}%. ` +
        `The whole ${SLOW_LARGE_BYTES / MiB} MiB run, start-up and verification included: **sluice ${whole(oursLarge)}%** (${oursLarge.cpuSeconds.toFixed(2)} s of CPU), dd + cmp ${whole(ddLarge)}% (${ddLarge.cpuSeconds.toFixed(2)} s); ` +
        issueVerdict(
          'target',
          `≤ ${CPU_TARGET_PERCENT}%`,
          (100 * oursLarge.cpuSeconds) / oursLarge.wallSeconds <= CPU_TARGET_PERCENT,
        ),
      '',
      cpuSplit(oursLarge),
      '',
      capacityCheckLine(dir),
    ].join('\n');
  } finally {
    group.remove();
  }
}

/**
 * Where a Sluice run's CPU went, by process: which one a lower figure has to come from. Each is a
 * lower bound (measure.ts cpuByLabel); the rest of the whole run's is what no label matched (the
 * shell and /usr/bin/time) and what each process spent after its last look.
 */
function cpuSplit(m: Measurement): string {
  const labels = ['helper', 'cli', 'probe', 'decoder'].filter((label) => m.cpuByLabel.has(label));
  const seconds = (label: string) => m.cpuByLabel.get(label) ?? 0;
  const named = labels.reduce((sum, label) => sum + seconds(label), 0);
  return (
    `Of the whole run's ${m.cpuSeconds.toFixed(2)} s of CPU, by process as last seen (every 25 ms, so each at least): ` +
    labels
      .map(
        (label) =>
          `${label} ${seconds(label).toFixed(2)} s (${((100 * seconds(label)) / m.wallSeconds).toFixed(2)}% of a core)`,
      )
      .join(', ') +
    // Negative would mean a watched process outside what /usr/bin/time counted: printed as it is, not hidden.
    `; the rest ${(m.cpuSeconds - named).toFixed(2)} s (the shell, /usr/bin/time, and what each spent after its last look; a process that lived less than a look may show 0).`
  );
}

/**
 * The capacity check's share of a flash on a 20 MB/s card that claims 4 GiB: its markers are
 * spread over the whole drive past the image, each a single block written before the image and
 * read back after it. The share is what the result reports (capacityCheck.seconds over seconds).
 */
function capacityCheckLine(dir: string): string {
  const image = join(dir, 'slow-small.img');
  const loop = createLoop({ size: 4 * GiB, dir, fill: 'sparse' });
  assertOwnedLoop(loop.path);
  const group = throttledGroup(loop.path, SD_CARD_BYTES_PER_SECOND);
  try {
    const out = execFileSync(
      'sh',
      [
        '-c',
        `echo $$ > '${group.dir}/cgroup.procs' && exec ${NODE} ${CLI} flash --yes --json --no-eject ${image} ${loop.path}`,
      ],
      { encoding: 'utf8' },
    );
    const result = out
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map(
        (line) =>
          JSON.parse(line) as { type?: string; seconds?: number; capacityCheck?: { markers: number; seconds: number } },
      )
      .find((line) => line.type === 'result');
    if (result?.capacityCheck === undefined || result.seconds === undefined)
      throw new Error(`no capacity check in the flash's result: ${out}`);
    const { markers, seconds } = result.capacityCheck;
    return `Capacity check on a 20 MB/s card claiming 4 GiB: ${markers} markers, ${(seconds * 1000).toFixed(1)} ms of a ${result.seconds.toFixed(2)} s flash (**${((100 * seconds) / result.seconds).toFixed(2)}%**).`;
  } finally {
    group.remove();
  }
}

/** Process start: bare Node, `sluice --help`, and a baseline build's (BENCH_BASELINE_CLI) in turns with it. */
async function startupSection(): Promise<string> {
  const node = await medianOf(5, () => measure(`${NODE} -e 0`));
  const help = (cli: string) => () => measure(`${NODE} ${cli} --help > /dev/null`);
  const [cli, base] = (await mediansInTurns(5, [
    help(CLI),
    ...(BASELINE_CLI === undefined ? [] : [help(BASELINE_CLI)]),
  ])) as [Measurement, Measurement | undefined];
  const ms = (m: Measurement) => `${(m.wallSeconds * 1000).toFixed(0)} ms, ${mb(m.peakRssBytes)} MB RSS`;
  const baseline = base === undefined ? '' : ` Baseline (${BASELINE_CLI}) \`sluice --help\`: ${ms(base)}.`;
  return ['### Process start', '', `\`node -e 0\`: ${ms(node)}; \`sluice --help\`: ${ms(cli)}.${baseline}`].join('\n');
}

/** The machine in a few words: CPU model, cores, kernel. */
function machine(): string {
  const cores = execFileSync('nproc', { encoding: 'utf8' }).trim();
  return `${cpus()[0]?.model.trim() ?? 'unknown CPU'}, ${cores} cores, Linux ${execFileSync('uname', ['-r'], { encoding: 'utf8' }).trim()}`;
}

function sparseSection(title: string, rows: Awaited<ReturnType<typeof sparseRows>>['rows']): string {
  const verdicts = rows.flatMap(({ name, m, reference, limit, headline: readmeRow }) => {
    if (reference === undefined || limit === undefined) return [];
    const share = m.wallSeconds / reference.wallSeconds;
    return [
      `${name}: **${share.toFixed(3)}** of the reference's time; ${issueVerdict('acceptance', `≤ ${limit}`, share <= limit)}`,
      ...(readmeRow === undefined
        ? []
        : [headline(readmeRow.job, readmeRow.reference, reference.wallSeconds, m.wallSeconds)]),
    ];
  });
  return [
    table(
      title,
      rows.map((row) => ({ ...row, bytes: OS_IMAGE_BYTES })),
    ),
    ...verdicts,
  ].join('\n\n');
}

/** Each section's runner, by name; a section may print several tables. */
function sectionRunners(dir: string): Record<(typeof ALL_SECTIONS)[number], () => Promise<string[]>> {
  const etcher = (image: string, device: string, bytes: number) =>
    measure(`${ETCHER_NODE} ${ETCHER} ${image} ${device} ${bytes}`, { watch: WATCH });
  const etcherName = () => `etcher-sdk 10 (decompressThenFlash, verify; Node ${etcherNodeVersion()})`;
  return {
    startup: async () => [
      await startupSection(),
      `XXH64 (WebAssembly, in place, 4 MiB blocks): ${(hashThroughput() / 1e9).toFixed(1)} GB/s on one core.`,
    ],
    raw: async () => [await rawSection(dir)],
    slow: async () => [await slowCardSection(dir)],
    sparse: async () => {
      const { title, rows } = await sparseRows(dir, FIXTURES);
      return [sparseSection(title, rows)];
    },
    formats: () => formatSections(dir, FIXTURES, RUNS, etcher, etcherName(), BASELINE_CLI),
    files: () => fileSections(dir, FIXTURES, RUNS, FILE_BYTES),
    backup: async () => [await usedBlocksBackupSection(FIXTURES, RUNS)],
    check: async () => [await checkSection(RUNS, NODE)],
    customise: async () => [await customiseSection(dir, RUNS)],
    catalogue: async () => [await catalogueSection(dir, FIXTURES, RUNS)],
    station: async () => [await stationSection(dir)],
    many: async () => [await manySection(dir)],
    memory: async () => [await memorySection(NODE)],
  };
}

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) {
    process.stderr.write('npm run bench needs root: it creates loop devices and a blkio cgroup.\n');
    process.exit(2);
  }
  const unknown = SECTIONS.filter((name) => !(ALL_SECTIONS as readonly string[]).includes(name));
  if (unknown.length > 0) {
    process.stderr.write(`Unknown bench sections: ${unknown.join(', ')}. Known: ${ALL_SECTIONS.join(', ')}.\n`);
    process.exit(2);
  }
  const dir = scratchDir();
  const loadAtStart = loadavg()[0] ?? 0;
  try {
    if (SECTIONS.includes('raw') || SECTIONS.includes('formats')) installEtcherSdk();
    const runners = sectionRunners(dir);
    const fresh = new Map<string, string>();
    for (const name of ALL_SECTIONS.filter((section) => SECTIONS.includes(section))) {
      const text = (await runners[name]()).join('\n\n');
      process.stdout.write(`${text}\n\n`);
      fresh.set(name, text);
    }
    const run = `Measured ${new Date().toISOString().slice(0, 10)} on ${machine()}, Node ${process.version}, load ${loadAtStart.toFixed(1)} at the start and ${(loadavg()[0] ?? 0).toFixed(1)} at the end`;
    process.stdout.write(`${run}\n`);
    if (WRITE_DOCS) {
      writeBenchmarksPage(BENCHMARKS_PAGE, ALL_SECTIONS, fresh, run);
      writeReadmeHeadlines(README, BENCHMARKS_PAGE);
    }
  } finally {
    cleanupLoops();
  }
}

await main();
