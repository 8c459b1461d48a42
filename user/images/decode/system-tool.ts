import { spawn, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { pipeline } from 'node:stream/promises';
import { closeFd } from '../../../node/io.js';
import { createOsPipe, type OsPipe } from '../../../node/os-pipe.js';
import { findTool } from '../../../node/run-tool.js';
import { drainPipe } from './pipe-reader.js';
import { ReaderGone, type ImageSink } from './image-sink.js';
import type { SourceInput } from './input.js';
import { jobError, JobError } from '../../../common/domain/failure.js';

/** A system decompressor the decoder may run, and how it is invoked to write to stdout. */
export interface ToolCommand {
  file: string;
  args: string[];
  /** How the decoder names this path in its report ("xz -dc -T2 (system)"). */
  label: string;
}

/** How much of a tool's stderr is kept to explain its failure. */
const STDERR_TAIL = 2048;

/**
 * xz's threaded decoder keeps each thread's whole block (24 MiB at xz -6) in memory. Measured on
 * a 1 GiB image of 24 MiB blocks, 2 threads: no limit 4.3-4.8 s at 143 MB RSS; 90 MiB 4.3 s at
 * 100 MB; 80 MiB 5.2 s; 64 MiB 7.4 s (mostly one thread). 48 MiB per thread keeps full speed.
 */
const XZ_MEMORY_PER_THREAD_MIB = 48;

/** The system's decompressor for `format`, when it has one worth using. */
export async function systemDecoder(format: 'xz' | 'zstd' | 'bzip2'): Promise<ToolCommand | null> {
  const threads = availableParallelism();
  switch (format) {
    case 'xz': {
      const file = await findTool('xz');
      const args = ['-dc', `-T${threads}`, `--memlimit-mt-decompress=${threads * XZ_MEMORY_PER_THREAD_MIB}MiB`];
      return file === null ? null : { file, args, label: `xz ${args.join(' ')} (system)` };
    }
    case 'zstd': {
      const file = await findTool('zstd');
      return file === null ? null : { file, args: ['-dc', '-q'], label: 'zstd -dc (system)' };
    }
    case 'bzip2': {
      // lbzip2 decodes on every core; bzip2 on one.
      const lbzip2 = await findTool('lbzip2');
      if (lbzip2 !== null)
        return { file: lbzip2, args: ['-dc', '-n', String(threads)], label: `lbzip2 -dc -n ${threads} (system)` };
      const bzip2 = await findTool('bzip2');
      return bzip2 === null ? null : { file: bzip2, args: ['-dc'], label: 'bzip2 -dc (system)' };
    }
  }
}

/** What a tool's complaint means: the words differ between xz, zstd and bzip2, the cases do not. */
function toolFailure(
  tool: ToolCommand,
  format: string,
  stderr: string,
  code: number | null,
  signal: NodeJS.Signals | null,
): Error {
  if (signal === 'SIGPIPE') return new ReaderGone();
  const said = stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0)
    .pop()
    ?.replace(/^[\w.]+: (\(stdin\)|\/\*stdin\*\\|stdin)\s*: ?/, '');
  const what = said ?? (signal !== null ? `killed by ${signal}` : `exit code ${code ?? '?'}`);
  if (/broken pipe/i.test(what)) return new ReaderGone();
  if (/unexpected end|ends unexpectedly|truncated|premature end/i.test(what)) {
    return jobError(
      'source-truncated',
      `The ${format} data ends too early: it is truncated (an incomplete download?). ${tool.file} says: ${what}.`,
    );
  }
  return jobError('source-corrupt', `The ${format} data is corrupt. ${tool.file} says: ${what}.`);
}

/**
 * Runs `tool` with `input` on its stdin (a descriptor it reads itself, or a stream fed from here)
 * and its stdout going to `output`: the pipe directly when nothing needs to see the decoded bytes,
 * else the sink. Resolves when the tool has decoded everything; rejects with what went wrong.
 */
export async function runDecoderTool(
  tool: ToolCommand,
  format: string,
  input: number | SourceInput,
  output: number | ImageSink,
): Promise<void> {
  // Into the sink through a kernel pipe read on a thread of its own (pipe-reader.ts); Windows has
  // no FIFOs (node/os-pipe.ts), and there the tool's stdout is read as a stream.
  const pipe: OsPipe | null = typeof output !== 'number' && process.platform !== 'win32' ? await createOsPipe() : null;
  let child: ChildProcess;
  try {
    child = spawn(tool.file, tool.args, {
      stdio: [
        typeof input === 'number' ? input : 'pipe',
        typeof output === 'number' ? output : (pipe?.writeFd ?? 'pipe'),
        'pipe',
      ],
      env: { ...process.env, LC_ALL: 'C' },
      // Its own process group: a terminal's Ctrl-C must not kill it behind the parent's back (the
      // parent turns Ctrl-C into a clean cancel). It exits with the pipe it writes to.
      detached: process.platform !== 'win32',
    });
  } catch (error) {
    if (pipe !== null) await closeFd(pipe.readFd);
    throw error;
  } finally {
    // The tool has its own copy now; ours would keep the reader from ever seeing the end.
    if (pipe !== null) await closeFd(pipe.writeFd);
  }
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr = (stderr + text).slice(-STDERR_TAIL)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.on('error', (error) =>
      reject(jobError('unsupported-format', `${tool.file} could not be run: ${error.message}`)),
    );
    child.on('close', (code, signal) => resolve({ code, signal }));
  });
  const feeding =
    typeof input === 'number' || child.stdin === null ? null : input.feed(child.stdin).catch((error: unknown) => error);
  const draining =
    typeof output === 'number'
      ? null
      : pipe !== null
        ? drainPipe(pipe.readFd, output).catch((error: unknown) => {
            // Nobody takes its output any more (the helper went away): the tool is stopped, as a stream's end would.
            child.kill();
            return error;
          })
        : child.stdout === null
          ? null
          : pipeline(child.stdout, output, { end: false }).catch((error: unknown) => error);
  const { code, signal } = await exited;
  const drainError = await draining;
  // A source that failed (a download that broke off) is the reason, not the tool's "unexpected end".
  const feedError = await feeding;
  if (feedError instanceof JobError) throw feedError;
  if (drainError instanceof Error) throw drainError;
  if (code !== 0) throw toolFailure(tool, format, stderr, code, signal);
  if (feedError instanceof Error && !/EPIPE|premature/i.test(feedError.message)) throw feedError;
}
