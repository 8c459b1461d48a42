import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, lstatSync } from 'node:fs';
import { resolve } from 'node:path';
import { assertOwnedLoop } from './loop-device.js';

/** The built CLI, exactly what `npx sluice` runs. `npm test` builds it first. */
export const CLI = resolve('out/run/sluice.js');

/**
 * A target a test may name: a loop device it created, or a partition of one, or a regular file
 * (existing or to be made) in its scratch space on /dev/shm (or /var/tmp, for big fixtures).
 */
export function assertTestTarget(path: string): void {
  const partition = /^(\/dev\/loop\d+)p\d+$/.exec(path);
  if (partition?.[1] !== undefined) return assertOwnedLoop(partition[1]);
  if (
    (path.startsWith('/dev/shm/sluice-test-') || path.startsWith('/var/tmp/sluice-test-')) &&
    !path.includes('..') &&
    (!existsSync(path) || lstatSync(path).isFile())
  )
    return;
  assertOwnedLoop(path);
}

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The JSON lines of a --json run. */
  events: { type: string; [key: string]: unknown }[];
}

export interface CliOptions {
  /** A blkio cgroup directory the CLI runs inside (a throttled "SD card"). */
  cgroup?: string;
  /** Wraps the command, e.g. ['strace', ...] or ['/usr/bin/time', ...]. */
  wrapper?: string[];
  /** Variables added to the environment the CLI inherits. */
  env?: Record<string, string>;
}

/** Starts `command` with stdout and stderr piped, inside `cgroup` when given. */
export function spawnCommand(command: readonly string[], cgroup?: string, env?: Record<string, string>): ChildProcess {
  const options = { stdio: ['ignore', 'pipe', 'pipe'] as ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } };
  if (cgroup === undefined) {
    return spawn(command[0] ?? '', command.slice(1), options);
  }
  // The shell joins the cgroup, then becomes the command, so every byte it (and any child) writes is throttled.
  const script = `echo $$ > '${cgroup}/cgroup.procs' && exec "$@"`;
  return spawn('sh', ['-c', script, 'sh', ...command], options);
}

/** Starts the CLI. Device arguments must already have passed assertTestTarget. */
export function spawnCli(args: string[], options: CliOptions = {}): ChildProcess {
  return spawnCommand([...(options.wrapper ?? []), process.execPath, CLI, ...args], options.cgroup, options.env);
}

export function collect(child: ChildProcess): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr?.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  return new Promise((resolvePromise) => {
    child.on('close', (code, signal) => {
      const events = stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as CliRun['events'][number]);
      resolvePromise({ code, signal, stdout, stderr, events });
    });
  });
}

/** Runs `sluice flash --yes --json IMAGE TARGET...` after checking every target is the test's own. */
export function flashCli(
  image: string,
  targets: string[],
  flags: string[] = [],
  options: CliOptions = {},
): Promise<CliRun> {
  targets.forEach(assertTestTarget);
  return collect(spawnCli(['flash', '--yes', '--json', ...flags, image, ...targets], options));
}

export function verifyCli(
  image: string,
  target: string,
  options: CliOptions = {},
  flags: string[] = [],
): Promise<CliRun> {
  assertTestTarget(target);
  return collect(spawnCli(['verify', '--json', ...flags, image, target], options));
}

/**
 * Starts `sluice check --yes --json DEVICE` (or its former name, `command: 'probe'`) after checking
 * the device is a loop device this test made.
 */
export function spawnCheck(device: string, options: CliOptions = {}, command = 'check'): ChildProcess {
  assertOwnedLoop(device);
  return spawnCli([command, '--yes', '--json', device], options);
}

export function checkCli(device: string, options: CliOptions = {}): Promise<CliRun> {
  return collect(spawnCheck(device, options));
}

/** The result events of a run, by target. */
export function resultsOf(run: CliRun): Map<
  string,
  {
    status: string;
    code?: string;
    message?: string;
    offset?: number;
    badBlocks?: number;
    bytes: number;
    skipped?: number;
  }
> {
  return new Map(run.events.filter((e) => e.type === 'result').map((e) => [String(e['target']), e as never]));
}

/** Resolves with the first JSON event the running CLI prints that satisfies `predicate`. */
export function waitForEvent(
  child: ChildProcess,
  predicate: (event: CliRun['events'][number]) => boolean,
): Promise<CliRun['events'][number]> {
  return new Promise((resolvePromise, reject) => {
    let pending = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.startsWith('{')) continue;
        const event = JSON.parse(line) as CliRun['events'][number];
        if (predicate(event)) resolvePromise(event);
      }
    });
    child.on('close', () => reject(new Error('the CLI exited before the awaited event')));
  });
}

/**
 * Runs `sluice backup --yes --json DRIVE FILE`. The drive is only read, but it must still be a
 * loop device this test made; the file must be in the test's own scratch space.
 */
export function spawnBackup(drive: string, file: string, flags: string[] = [], options: CliOptions = {}): ChildProcess {
  assertOwnedLoop(drive);
  if (/^\/dev\/loop\d+$/.test(file))
    throw new Error(`refusing to let a test back up into ${file}: a backup's target is a file`);
  assertTestTarget(file);
  return spawnCli(['backup', '--yes', '--json', ...flags, drive, file], options);
}

export function backupCli(
  drive: string,
  file: string,
  flags: string[] = [],
  options: CliOptions = {},
): Promise<CliRun> {
  return collect(spawnBackup(drive, file, flags, options));
}

/** Runs `sluice clone --yes --json SOURCE TARGET` after checking both are the test's own loop devices. */
export function cloneCli(source: string, target: string, flags: string[] = []): Promise<CliRun> {
  assertOwnedLoop(source);
  assertTestTarget(target);
  return collect(spawnCli(['clone', '--yes', '--json', ...flags, source, target]));
}
