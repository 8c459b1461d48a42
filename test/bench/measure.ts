import { spawn } from 'node:child_process';

/** One timed run of a whole command, as GNU time saw it (children included). */
export interface Measurement {
  wallSeconds: number;
  cpuSeconds: number;
  /** Peak resident set of the largest process in the run, in bytes. */
  peakRssBytes: number;
  exitCode: number;
  output: string;
}

/** Runs `sh -c script` under /usr/bin/time. The script may be a pipeline. */
export function measure(script: string, options: { cgroup?: string } = {}): Promise<Measurement> {
  const join = options.cgroup === undefined ? '' : `echo $$ > '${options.cgroup}/cgroup.procs' && `;
  const full = `${join}exec /usr/bin/time -f 'bench-time %e %U %S %M' sh -c '${script.replace(/'/g, `'\\''`)}'`;
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', full], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const m = /bench-time ([\d.]+) ([\d.]+) ([\d.]+) (\d+)/.exec(output);
      if (!m) return reject(new Error(`no timing from: ${script}\n${output}`));
      resolve({
        wallSeconds: Number(m[1]),
        cpuSeconds: Number(m[2]) + Number(m[3]),
        peakRssBytes: Number(m[4]) * 1024,
        exitCode: code ?? -1,
        output,
      });
    });
  });
}

/** The run with the median wall time of `runs` repetitions; each must succeed. */
export async function medianOf(runs: number, run: () => Promise<Measurement>): Promise<Measurement> {
  const results: Measurement[] = [];
  for (let i = 0; i < runs; i++) {
    const r = await run();
    if (r.exitCode !== 0) throw new Error(`benchmark command failed (exit ${r.exitCode}):\n${r.output}`);
    results.push(r);
  }
  results.sort((a, b) => a.wallSeconds - b.wallSeconds);
  return results[Math.floor(results.length / 2)] as Measurement;
}
