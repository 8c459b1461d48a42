/**
 * `npm run fuzz`: every parser of untrusted bytes (targets.ts) fed inputs that fast-check derives
 * from real seeds (bytes flipped, runs overwritten, cut short, grown, spliced) and from nothing.
 * Property-based mutation rather than coverage guidance: fast-check is pure JavaScript and runs
 * wherever Node does, where @jazzer.js/core needs a native addon built for this Node.
 *
 * The invariant, per input: the parser ends with nothing or with an error it documents, within
 * FUZZ_INPUT_MS of CPU and FUZZ_INPUT_WAIT_MS of wall time; and the process grows by no more than FUZZ_RSS_BYTES over what it held before the
 * first input (its seeds, fast-check): run with --max-old-space-size=256 for the heap, and checked
 * on the resident set, since a Buffer lives outside the heap. A finding is written to test-artifacts/fuzz/<target>/ as the input that fails, shrunk by
 * fast-check, to become a regression fixture in test/fixtures/fuzz/<target>/.
 *
 * Environment: FUZZ_RUNS inputs per target (default 20000), FUZZ_SEED to replay a run,
 * FUZZ_TARGETS to run some targets only (names separated by commas).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { TARGETS, type FuzzTarget } from './targets.js';

/**
 * No honest parse of these small inputs costs this much CPU; a slow one is a finding. CPU, not
 * wall time: CI's short pass shares two cores with QEMU guests, which tripled an input's wall time
 * (a 2 MB UDIF input: 2,303 ms) without it costing any more.
 */
export const FUZZ_INPUT_MS = 2000;
/** A parse that waits (for a child, a socket, a timer) rather than computes: caught by its wall time. */
export const FUZZ_INPUT_WAIT_MS = 20_000;
/** The issue's bound on a probing process, as growth over the campaign's own resident set before its first input. */
export const FUZZ_RSS_BYTES = 256 * 1024 * 1024;
/** The resident set before the first input of the current target. */
let baselineRss = 0;

const RUNS = Number(process.env['FUZZ_RUNS'] ?? 20_000);
const SEED = process.env['FUZZ_SEED'] === undefined ? undefined : Number(process.env['FUZZ_SEED']);
const ONLY = process.env['FUZZ_TARGETS']?.split(',');
const FINDINGS = 'test-artifacts/fuzz';

/** Inputs derived from the seeds: each seed mutated a little or a lot, or bytes from nothing. */
function inputs(seeds: readonly Buffer[]): fc.Arbitrary<Buffer> {
  const seed = fc.constantFrom(...seeds);
  const mutated = fc
    .tuple(
      seed,
      fc.array(
        fc.oneof(
          fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
          fc.record({
            kind: fc.constant('set' as const),
            at: fc.nat(),
            bytes: fc.uint8Array({ minLength: 1, maxLength: 16 }),
          }),
          // 0xff and 0x00 runs: the values that make a length or a count enormous, or nothing.
          fc.record({
            kind: fc.constant('fill' as const),
            at: fc.nat(),
            length: fc.integer({ min: 1, max: 64 }),
            value: fc.constantFrom(0x00, 0xff, 0x7f, 0x80),
          }),
          fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
          fc.record({ kind: fc.constant('grow' as const), length: fc.integer({ min: 1, max: 4096 }) }),
        ),
        { minLength: 1, maxLength: 8 },
      ),
    )
    .map(([original, edits]) => {
      let bytes = Buffer.from(original);
      for (const edit of edits) {
        const at = bytes.length === 0 ? 0 : edit.kind === 'grow' ? 0 : edit.at % bytes.length;
        if (edit.kind === 'flip' && bytes.length > 0) bytes[at] = (bytes[at] ?? 0) ^ (1 << edit.bit);
        if (edit.kind === 'set') Buffer.from(edit.bytes).copy(bytes, at);
        if (edit.kind === 'fill') bytes.fill(edit.value, at, Math.min(bytes.length, at + edit.length));
        if (edit.kind === 'cut') bytes = bytes.subarray(0, at);
        if (edit.kind === 'grow') bytes = Buffer.concat([bytes, Buffer.alloc(edit.length)]);
      }
      return bytes;
    });
  // Mostly mutations of real files, which reach deep into a parser; some from nothing at all.
  return fc.oneof(
    { arbitrary: mutated, weight: 9 },
    { arbitrary: fc.uint8Array({ maxLength: 4096 }).map((bytes) => Buffer.from(bytes)), weight: 1 },
  );
}

/** What went wrong on one input, or null. */
async function verdict(target: FuzzTarget, input: Buffer, dir: string): Promise<string | null> {
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  let failure: string | null = null;
  try {
    await target.run(input, dir);
  } catch (error) {
    if (!target.documented(error))
      failure = `an undocumented error: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;
  }
  const cpu = process.cpuUsage(cpuBefore);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  const ms = performance.now() - started;
  if (failure === null && cpuMs > FUZZ_INPUT_MS)
    failure = `${cpuMs.toFixed(0)} ms of CPU on one input (limit ${FUZZ_INPUT_MS} ms)`;
  if (failure === null && ms > FUZZ_INPUT_WAIT_MS)
    failure = `${ms.toFixed(0)} ms on one input, waiting (limit ${FUZZ_INPUT_WAIT_MS} ms)`;
  const grown = process.memoryUsage().rss - baselineRss;
  if (failure === null && grown > FUZZ_RSS_BYTES)
    failure = `the process grew by ${(grown / 1e6).toFixed(0)} MB (limit ${FUZZ_RSS_BYTES / 1e6} MB)`;
  return failure;
}

export interface TargetReport {
  target: string;
  executions: number;
  seconds: number;
  failure: string | null;
}

async function fuzz(target: FuzzTarget, dir: string): Promise<TargetReport> {
  const seeds = target.seeds(dir);
  baselineRss = process.memoryUsage().rss;
  const started = performance.now();
  let executions = 0;
  let failed: { input: Buffer; why: string } | null = null;
  const property = fc.asyncProperty(inputs(seeds), async (input) => {
    executions += 1;
    const why = await verdict(target, input, dir);
    if (why !== null) {
      failed = { input, why };
      return false;
    }
    return true;
  });
  const outcome = await fc.check(property, { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }) });
  const seconds = (performance.now() - started) / 1000;
  if (!outcome.failed) return { target: target.name, executions, seconds, failure: null };
  // fast-check has shrunk the input: keep the smallest one that fails, to become a fixture.
  const smallest =
    (outcome.counterexample?.[0] as Buffer | undefined) ??
    (failed as { input: Buffer } | null)?.input ??
    Buffer.alloc(0);
  const why = (await verdict(target, smallest, dir)) ?? (failed as { why: string } | null)?.why ?? 'failed';
  const folder = join(FINDINGS, target.name.replace(/[^a-z0-9]+/gi, '-').toLowerCase());
  mkdirSync(folder, { recursive: true });
  const file = join(folder, `${createHash('sha256').update(smallest).digest('hex').slice(0, 16)}.bin`);
  writeFileSync(file, smallest);
  return {
    target: target.name,
    executions,
    seconds,
    failure: `${why} (input: ${file}, ${smallest.length} bytes; replay with FUZZ_SEED=${outcome.seed})`,
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-fuzz-'));
  const reports: TargetReport[] = [];
  try {
    for (const target of TARGETS.filter((t) => ONLY === undefined || ONLY.includes(t.name))) {
      const report = await fuzz(target, dir);
      reports.push(report);
      process.stdout.write(`${JSON.stringify(report)}\n`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write(
    `${JSON.stringify({ peakRssBytes: process.resourceUsage().maxRSS * 1024, targets: reports.length })}\n`,
  );
  process.exit(reports.some((r) => r.failure !== null) ? 1 : 0);
}

await main();
