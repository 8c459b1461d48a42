/**
 * One question to a child process that reads untrusted input (the image probe, the catalogue
 * reader), under a memory cap and a time limit: past either it is killed, and the caller gets a
 * JobError that says so, while its own event loop never waited on the parsing. The child answers
 * with exactly one message and exits.
 */
import { readFile } from 'node:fs/promises';
import { jobError, type JobError } from '../../../common/domain/failure.js';
import { spawnImageChild } from './image-child.js';

export interface ChildLimits {
  /**
   * V8's old generation (--max-old-space-size), in MiB: where the parsers' tables, ranges and
   * strings live.
   */
  heapMiB: number;
  /**
   * The child's resident memory, in MiB, watched from here where the system shows it (Linux's
   * /proc): it also counts what the heap cap cannot see, the buffers and typed arrays a header's
   * sizes could ask for.
   */
  memoryMiB: number;
  /** How long the whole answer may take, in milliseconds. */
  timeMs: number;
}

/** The words of each way the child can fail, in terms of what it was asked. */
export interface ChildWords {
  /** It went past a limit. */
  overLimit(what: 'memory' | 'heap' | 'time'): JobError;
  /** It stopped without an answer (`why`: its exit code or signal, and its last words). */
  stopped(why: string): JobError;
  /** It could not be started at all. */
  notStarted(why: string): JobError;
}

/** How long a child that has answered may take to exit before it is killed. */
const EXIT_GRACE_MS = 5000;

/** How often the child's resident memory is looked at. */
const MEMORY_POLL_MS = 20;

/** V8's own words when the old generation is full (it then aborts the process). */
const HEAP_EXHAUSTED = /JavaScript heap out of memory|Reached heap limit/;

/** The child's resident set size in bytes, where the system tells: Linux's /proc. Null elsewhere or once it is gone. */
async function residentBytes(pid: number): Promise<number | null> {
  if (process.platform !== 'linux') return null;
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kib = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
    return kib === undefined ? null : Number(kib) * 1024;
  } catch {
    return null;
  }
}

/**
 * The parent's side of a child that asks questions of its own before it answers (the drive map
 * reader asks for the drive's bytes): null for a message that is not a question (the answer), else
 * the reply to send back. A reply that rejects stops the child, and the caller gets that error.
 */
export type ChildQuestions = (message: unknown) => Promise<object> | null;

/**
 * Starts `entry` as the user (the invoking user under sudo: image-child.ts) with `limits`, sends it
 * `request` and resolves with its one answer as `check` makes of it (a JobError returned by
 * `check` rejects); `questions` replies to what it asks on the way. Rejects with a JobError for a
 * child that went past a limit (once its process is gone) and for one that stopped without an
 * answer. The first of these counts.
 */
export function askLimitedChild<T>(
  entry: string,
  request: object,
  limits: ChildLimits,
  check: (message: unknown) => T | JobError,
  words: ChildWords,
  questions?: ChildQuestions,
): Promise<T> {
  const child = spawnImageChild(
    entry,
    [`--max-old-space-size=${limits.heapMiB}`, '--max-semi-space-size=1'],
    [],
    ['ignore', 'ignore', 'pipe', 'ipc'],
  );
  let stderr = '';
  /** Seen as it arrives: V8's native stack trace after it could push the words out of `stderr`. */
  let heapExhausted = false;
  child.stderr?.setEncoding('utf8').on('data', (text: string) => {
    stderr = (stderr + text).slice(-4096);
    heapExhausted ||= HEAP_EXHAUSTED.test(stderr);
  });
  return new Promise<T>((resolve, reject) => {
    const running = () => child.exitCode === null && child.signalCode === null;
    /** Set when a limit (or a reply that failed) stopped the child: the caller hears it once the process is gone. */
    let stopped: Error | null = null;
    const stopWith = (why: Error) => {
      stopped ??= why;
      if (running()) child.kill('SIGKILL');
    };
    const stop = (what: 'memory' | 'time') => stopWith(words.overLimit(what));
    const timer = setTimeout(() => stop('time'), limits.timeMs);
    let looking = false;
    const watch = setInterval(() => {
      if (looking || child.pid === undefined) return;
      looking = true;
      void residentBytes(child.pid).then((bytes) => {
        looking = false;
        if (bytes !== null && bytes > limits.memoryMiB * 1024 * 1024) stop('memory');
      });
    }, MEMORY_POLL_MS);
    const done = () => {
      clearTimeout(timer);
      clearInterval(watch);
    };
    child.on('message', (message: unknown) => {
      if (stopped !== null) return;
      const asked = questions?.(message) ?? null;
      if (asked !== null) {
        asked.then(
          (reply) => running() && stopped === null && child.send(reply, () => undefined),
          (error: unknown) => stopWith(error instanceof Error ? error : new Error(String(error))),
        );
        return;
      }
      done();
      const result = check(message);
      if (result instanceof Error) reject(result);
      else resolve(result);
      // It exits right after its answer; one that hangs in its exit is not waited for.
      setTimeout(() => running() && child.kill('SIGKILL'), EXIT_GRACE_MS).unref();
    });
    child.on('error', (error) => {
      done();
      reject(words.notStarted(error.message));
    });
    child.on('close', (code, signal) => {
      done();
      if (stopped !== null) return reject(stopped);
      if (heapExhausted) return reject(words.overLimit('heap'));
      const why = signal !== null ? `killed by ${signal}` : `exit code ${code ?? '?'}`;
      const said = stderr.trim().split('\n').pop() ?? '';
      reject(words.stopped(`${why}${said ? `: ${said}` : ''}`));
    });
    // A child that could not start says so through 'error' and 'close'.
    child.send(request, () => undefined);
  });
}

/** The words for a child that could not be started, the same for every child. */
export function notStarted(what: string): (why: string) => JobError {
  return (why) => jobError('internal', `${what} could not be started: ${why}`);
}
