/** Looking at real processes from the outside, through /proc: who is whose child, and who is gone. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface ProcInfo {
  pid: number;
  ppid: number;
  state: string;
  argv: string[];
}

function readProc(pid: number): ProcInfo | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may itself contain spaces or parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .filter((a) => a.length > 0);
    return { pid, ppid: Number(fields[1]), state: fields[0] ?? '?', argv };
  } catch {
    return null;
  }
}

function allProcesses(): ProcInfo[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map((name) => readProc(Number(name)))
    .filter((p): p is ProcInfo => p !== null);
}

/** The descendants of `ancestor` whose argv satisfies `match`, nearest first. */
export function findDescendants(ancestor: number, match: (argv: string[]) => boolean): number[] {
  const processes = allProcesses();
  const children = new Map<number, ProcInfo[]>();
  for (const p of processes) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const found: number[] = [];
  const queue = [...(children.get(ancestor) ?? [])];
  for (let p = queue.shift(); p !== undefined; p = queue.shift()) {
    if (match(p.argv)) found.push(p.pid);
    queue.push(...(children.get(p.pid) ?? []));
  }
  return found;
}

/** The first descendant of `ancestor` whose argv satisfies `match`, or null. */
export function findDescendant(ancestor: number, match: (argv: string[]) => boolean): number | null {
  return findDescendants(ancestor, match)[0] ?? null;
}

/** Waits until such a descendant exists, and returns its pid. */
export async function waitForDescendant(
  ancestor: number,
  match: (argv: string[]) => boolean,
  timeoutMs = 10_000,
): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const pid = findDescendant(ancestor, match);
    if (pid !== null) return pid;
    if (performance.now() > deadline) throw new Error(`no descendant of ${ancestor} matched within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** How many threads of process `pid` wait in open(2) of a FIFO for its other end (the kernel's wait_for_partner). */
export function threadsInFifoOpen(pid: number | 'self'): number {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return 0; // the process has exited
  }
  const wchan = (task: string) => {
    try {
      return readFileSync(`/proc/${pid}/task/${task}/wchan`, 'utf8');
    } catch {
      return ''; // the thread has exited
    }
  };
  return tasks.filter((task) => wchan(task) === 'wait_for_partner').length;
}

/** The process has exited: no longer in /proc, or a zombie nobody has reaped yet. */
export function hasExited(pid: number): boolean {
  const p = readProc(pid);
  return p === null || p.state === 'Z' || p.state === 'X';
}

/** Polls until `pid` has exited; returns the milliseconds it took, or throws after `timeoutMs`. */
export async function waitForExit(pid: number, timeoutMs: number): Promise<number> {
  const started = performance.now();
  while (!hasExited(pid)) {
    if (performance.now() - started > timeoutMs) throw new Error(`process ${pid} still running after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return performance.now() - started;
}

/** The built decoder process: Node running out/run/decoder.js, the decoder's bundle. */
export function isDecoder(argv: string[]): boolean {
  return argv[0] === process.execPath && argv.some((a) => a.endsWith('out/run/decoder.js'));
}

/** The processes whose environment holds `entry` (NAME=value), such as a marker a test gave a command it ran. */
export function processesWithEnvironment(entry: string): number[] {
  return allProcesses()
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p.pid}/environ`, 'utf8').split('\0').includes(entry);
      } catch {
        return false;
      }
    })
    .map((p) => p.pid);
}

/** The built helper, however it was started: Node running out/run/helper.js, the helper's bundle. */
export function isHelper(argv: string[]): boolean {
  return argv[0] === process.execPath && argv.some((a) => a.endsWith('out/run/helper.js'));
}

/**
 * The lines of `ss -xlp`, `ss -tlp` and `ss -ulp` (listening Unix, TCP and UDP sockets with their
 * owners) that name one of `pids`. The listing is first checked to show a listener this test
 * process opens for the purpose, so an empty answer means "none", not "ss saw nothing".
 */
export async function listeningSocketsOf(pids: readonly number[]): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-test-ss-'));
  const canary = createServer().listen(join(dir, 'canary.sock'));
  try {
    await new Promise((resolve) => canary.once('listening', resolve));
    const lines = ['-xlp', '-tlp', '-ulp'].flatMap((flags) =>
      execFileSync('ss', [flags], { encoding: 'utf8' }).split('\n'),
    );
    const owned = (pid: number) => lines.filter((line) => line.includes(`pid=${pid},`));
    if (owned(process.pid).length === 0)
      throw new Error('ss does not show this process’s own listening socket: the check cannot see listeners');
    return pids.flatMap(owned);
  } finally {
    canary.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The children of `pid` (of all its threads), from /proc/PID/task/TID/children. */
function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8')
        .split(' ')
        .filter((s) => s.trim() !== '')
        .map(Number),
    );
  } catch {
    return [];
  }
}

/** What a watched process was seen as: its command line, its ids, and the most memory it held. */
export interface SeenProcess {
  argv: string[];
  /** The process that started it. */
  parent: number;
  /** Real, effective, saved and filesystem ids, as /proc/PID/status lists them. */
  uids: number[];
  gids: number[];
  /** Supplementary groups. */
  groups: number[];
  /** The largest VmHWM (peak resident set) seen, in bytes: a lower bound of its true peak. */
  peakBytes: number;
}

/**
 * Looks at every descendant of `ancestor` whose command line satisfies `match`, every
 * `intervalMs`, until stopped: who it ran as and how much memory it held at most. A child forked
 * but not yet running its own program still shows its parent's command line and ids: it is not
 * counted. (A child started as another user with the same command line, as sudo sluice's broker
 * starts the command line as the user, is.)
 */
export function watchDescendants(
  ancestor: number,
  match: (argv: string[]) => boolean,
  intervalMs = 5,
): { stop(): Map<number, SeenProcess> } {
  const seen = new Map<number, SeenProcess>();
  const argvOf = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  const look = () => {
    const queue = childrenOf(ancestor).map((pid) => ({ pid, parent: ancestor, parentCommand: '', parentUids: '' }));
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      const { pid, parent, parentCommand, parentUids } = next;
      try {
        const command = argvOf(pid);
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        const field = (name: string) =>
          (new RegExp(`^${name}:[ \\t]*(.*)$`, 'm').exec(status)?.[1] ?? '')
            .trim()
            .split(/\s+/)
            .filter((s) => s !== '')
            .map(Number);
        const uids = field('Uid');
        queue.push(
          ...childrenOf(pid).map((child) => ({
            pid: child,
            parent: pid,
            parentCommand: command,
            parentUids: uids.join(' '),
          })),
        );
        const argv = command.split('\0').filter((a) => a.length > 0);
        // An exited process not yet reaped has no command line: what was seen of it stands.
        if (command === '') continue;
        if ((command === parentCommand && uids.join(' ') === parentUids) || !match(argv)) {
          seen.delete(pid);
          continue;
        }
        const peakBytes = (field('VmHWM')[0] ?? 0) * 1024;
        const before = seen.get(pid);
        seen.set(pid, {
          argv,
          parent,
          uids,
          gids: field('Gid'),
          groups: field('Groups'),
          peakBytes: Math.max(peakBytes, before?.peakBytes ?? 0),
        });
      } catch {
        // Gone between the listing and the look.
      }
    }
  };
  const timer = setInterval(look, intervalMs);
  look();
  return {
    stop: () => {
      clearInterval(timer);
      return seen;
    },
  };
}
