import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** One timed run of a whole command, as GNU time saw it (children included). */
export interface Measurement {
  wallSeconds: number;
  cpuSeconds: number;
  /** Peak resident set of the largest process in the run, in bytes. */
  peakRssBytes: number;
  exitCode: number;
  output: string;
  /** Peak RSS in bytes of the watched processes, by label (see MeasureOptions.watch). */
  peaks: Map<string, number>;
  /**
   * Peak Private_Dirty in bytes of the watched processes, by label: the memory a process wrote and
   * shares with nobody, where RSS also counts the Node binary and libraries every Node process
   * shares. Issue 16 sets its target for the helper (≤ 16 MB, flat with the image's size). The
   * kernel keeps no high-water mark of it, so this is the largest of the polls (every 100 ms).
   */
  privatePeaks: Map<string, number>;
  /**
   * CPU seconds (user + system) of the watched processes, by label, summed over every process of
   * that label as last seen (every 25 ms): what a process spent after the last look before it
   * exited is not counted, so each figure is a lower bound, short by about one look's time for
   * each core the process kept busy then.
   */
  cpuByLabel: Map<string, number>;
}

/** How often the processes of a run are looked at: for their peak RSS (VmHWM, kept by the kernel) and their Private_Dirty (sampled). */
const WATCH_INTERVAL_MS = 25;

/**
 * The watched processes whose Private_Dirty is read: the helper (issue 16's target) and
 * etcher-sdk's process beside it. Not the decoder's or the system tool's: reading smaps_rollup
 * every 25 ms for those, whose mappings are large and busy, slowed the run it measured (the .xz
 * flash took 4.55-4.75 s with it and 4.03 s without; xz | dd took 3.57-3.95 s in the same runs).
 */
const PRIVATE_LABELS = new Set(['helper', 'etcher']);
/** Every 4th look (100 ms) for those: their private memory is flat once their buffers are in use. */
const PRIVATE_EVERY = 4;

export interface MeasureOptions {
  cgroup?: string;
  /** Label → test on a process's command line; each matching descendant's peak RSS and Private_Dirty are recorded. */
  watch?: Record<string, (argv: string[]) => boolean>;
}

/**
 * The fields of /proc/PID/stat from the third on (throws once the process is gone). The fields are
 * counted from 1 (pid); what follows the command name's ')', which may hold spaces, starts at field
 * 3, so field N is at index N - 3: ppid (4), utime (14), stime (15), starttime (22).
 */
function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** A process's parent, or null once it is gone. */
function parentOf(pid: number): number | null {
  try {
    return Number(statFields(pid)[1]);
  } catch {
    return null; // gone between listing and reading
  }
}

/** Clock ticks a second, the unit of utime and stime in /proc/PID/stat. */
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

/**
 * A process's command line, peak RSS, start time (in clock ticks after boot: with the pid, it names
 * one process even if the pid is used again) and CPU seconds so far, or null once it is gone. Read
 * on every look: a child's command line is its parent's until it execs.
 */
function readWatched(pid: number): { argv: string[]; hwm: number; started: string; cpuSeconds: number } | null {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    const fields = statFields(pid);
    const ticks = Number(fields[11]) + Number(fields[12]);
    return { argv, hwm: Number(hwm ?? 0) * 1024, started: fields[19] ?? '', cpuSeconds: ticks / CLOCK_TICKS };
  } catch {
    return null;
  }
}

/** A process's Private_Dirty in bytes; 0 once it is gone. Read only for watched processes: smaps_rollup walks the process's page tables, status does not. */
export function privateDirty(pid: number): number {
  try {
    const kb = /Private_Dirty:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1];
    return Number(kb ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/**
 * Records the peak RSS, Private_Dirty and CPU time of `root`'s descendants that match the watch list.
 *
 * Whether a process descends from `root` is decided once, when it is first seen (its parent does
 * not change when it execs), so each look reads the parent of new processes only and the command
 * line and status of `root`'s own. Reading all three files of every process on each look cost the
 * bench process 150 ms of CPU a second (73 processes; 15% of one of the two cores the measured
 * tools ran on); this costs about 40 ms a second, most of it listing /proc.
 */
function watchPeaks(
  root: number,
  watch: NonNullable<MeasureOptions['watch']>,
  peaks: Map<string, number>,
  privatePeaks: Map<string, number>,
  cpuByLabel: Map<string, number>,
): () => void {
  let tick = 0;
  const descends = new Map<number, boolean>([[root, true]]);
  /** The label and last-seen CPU seconds of each watched process (by pid and start time), kept after it is gone. */
  const cpuOf = new Map<string, { label: string; cpuSeconds: number }>();
  const timer = setInterval(() => {
    tick++;
    let fresh: Array<[number, number]> = [];
    for (const name of readdirSync('/proc')) {
      const pid = Number(name);
      if (!Number.isInteger(pid) || descends.has(pid)) continue;
      const ppid = parentOf(pid);
      if (ppid !== null) fresh.push([pid, ppid]);
    }
    // A parent is older than its child, but may be new in the same look: settle parents first.
    for (let settled = true; settled && fresh.length > 0;) {
      settled = false;
      fresh = fresh.filter(([pid, ppid]) => {
        if (!descends.has(ppid) && fresh.some(([other]) => other === ppid)) return true;
        descends.set(pid, descends.get(ppid) === true);
        settled = true;
        return false;
      });
    }
    for (const [pid, ours] of descends) {
      if (!ours) continue;
      const info = readWatched(pid);
      // Gone: forgotten, so that a later process given the same number is judged afresh.
      if (info === null && pid !== root) descends.delete(pid);
      if (info === null) continue;
      for (const [label, matches] of Object.entries(watch)) {
        if (!matches(info.argv)) continue;
        peaks.set(label, Math.max(peaks.get(label) ?? 0, info.hwm));
        cpuOf.set(`${pid}@${info.started}`, { label, cpuSeconds: info.cpuSeconds });
        if (PRIVATE_LABELS.has(label) && tick % PRIVATE_EVERY === 0)
          privatePeaks.set(label, Math.max(privatePeaks.get(label) ?? 0, privateDirty(pid)));
      }
    }
  }, WATCH_INTERVAL_MS);
  return () => {
    clearInterval(timer);
    for (const { label, cpuSeconds } of cpuOf.values())
      cpuByLabel.set(label, (cpuByLabel.get(label) ?? 0) + cpuSeconds);
  };
}

/** What watchProcesses saw of the processes it watched, by label (see Measurement). */
export type Watched = Pick<Measurement, 'peaks' | 'privatePeaks' | 'cpuByLabel'>;

/** Watches the descendants of `root` (a run that measure() does not start itself) until `stop`. */
export function watchProcesses(root: number, watch: NonNullable<MeasureOptions['watch']>): { stop(): Watched } {
  const watched: Watched = { peaks: new Map(), privatePeaks: new Map(), cpuByLabel: new Map() };
  const stop = watchPeaks(root, watch, watched.peaks, watched.privatePeaks, watched.cpuByLabel);
  return {
    stop: () => {
      stop();
      return watched;
    },
  };
}

/** Runs `sh -c script` under /usr/bin/time. The script may be a pipeline. */
export function measure(script: string, options: MeasureOptions = {}): Promise<Measurement> {
  const join = options.cgroup === undefined ? '' : `echo $$ > '${options.cgroup}/cgroup.procs' && `;
  const full = `${join}exec /usr/bin/time -f 'bench-time %e %U %S %M' sh -c '${script.replace(/'/g, `'\\''`)}'`;
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', full], { stdio: ['ignore', 'pipe', 'pipe'] });
    const peaks = new Map<string, number>();
    const privatePeaks = new Map<string, number>();
    const cpuByLabel = new Map<string, number>();
    const stopWatching =
      options.watch !== undefined && child.pid !== undefined
        ? watchPeaks(child.pid, options.watch, peaks, privatePeaks, cpuByLabel)
        : () => undefined;
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      stopWatching();
      const m = /bench-time ([\d.]+) ([\d.]+) ([\d.]+) (\d+)/.exec(output);
      if (!m) return reject(new Error(`no timing from: ${script}\n${output}`));
      resolve({
        wallSeconds: Number(m[1]),
        cpuSeconds: Number(m[2]) + Number(m[3]),
        peakRssBytes: Number(m[4]) * 1024,
        exitCode: code ?? -1,
        output,
        peaks,
        privatePeaks,
        cpuByLabel,
      });
    });
  });
}

/** The run with the median wall time of `runs` repetitions; each must succeed. */
export async function medianOf(runs: number, run: () => Promise<Measurement>): Promise<Measurement> {
  const [median] = await mediansInTurns(runs, [run]);
  return median as Measurement;
}

/**
 * The median run of each of `commands`, run in turns: one of each per round, `runs` rounds. This
 * VM's speed drifts within a section (the same `dd` took 1.46 s and 1.63 s in one afternoon), and
 * run one after the other, each command met its own stretch of it. Each run must succeed.
 */
export async function mediansInTurns(
  runs: number,
  commands: ReadonlyArray<() => Promise<Measurement>>,
): Promise<Measurement[]> {
  const results = commands.map((): Measurement[] => []);
  for (let round = 0; round < runs; round++) {
    for (const [i, run] of commands.entries()) {
      const r = await run();
      if (r.exitCode !== 0) throw new Error(`benchmark command failed (exit ${r.exitCode}):\n${r.output}`);
      results[i]?.push(r);
    }
  }
  return results.map(
    (rs) => rs.sort((a, b) => a.wallSeconds - b.wallSeconds)[Math.floor(rs.length / 2)] as Measurement,
  );
}

/** How a figure stands against issue 16, as the bench prints it: "target (issue 16): ≤ 1% — met.". */
export function issueVerdict(kind: 'target' | 'acceptance', bound: string, met: boolean): string {
  return `${kind} (issue 16): ${bound} — ${met ? 'met' : 'not met'}.`;
}
