/**
 * The parent's side of the decoder process (decode/main.ts): starts it with the user's rights (the
 * invoking user's under sudo: image-child.ts), connects its output to what will be the helper's
 * fd 0, and turns whatever happens to it into one DecoderEnd.
 */
import type { ChildProcess, StdioOptions } from 'node:child_process';
import type { Readable } from 'node:stream';
import type { Failure } from '../../../common/domain/failure.js';
import { closeFd } from '../../../node/io.js';
import type { DecodePlan, DecoderMessage, SkipAck } from '../../../common/contracts/decoder-protocol.js';
import type { SkipReason } from '../../../common/domain/skipped.js';
import { createOsPipe, type OsPipe } from '../../../node/os-pipe.js';
import { processEntry } from '../../../node/process-entries.js';
import { spawnImageChild } from './image-child.js';

/**
 * V8 flags for the decoder, as for the helper (user/launcher/helper-program.ts): a 1 MiB
 * semi-space keeps the young generation from growing with the image, and --expose-gc lets the
 * image sink collect spent chunks itself (see image-sink.ts GC_EVERY_BYTES).
 */
const DECODER_V8_FLAGS = ['--max-semi-space-size=1', '--expose-gc'] as const;

/** How long a decoder that has sent its end message may take to exit before it is killed. */
const EXIT_GRACE_MS = 5000;

const DECODER_ENTRY = processEntry('decoder');

/** How the decoder ended. */
export type DecoderEnd =
  | { status: 'ok'; bytes: number | null; sha256: string | null }
  | { status: 'failed'; failure: Failure }
  /** The helper stopped reading first, or the decoder was stopped: the helper's result stands. */
  | { status: 'abandoned' };

/**
 * How the decoded image leaves the decoder. 'stream': a Unix socket pair whose other end is handed
 * to the helper as its fd 0 with no copy through this process; faster than a pipe, because a
 * socket holds about 200 KiB where a pipe holds 64 KiB, so the decoder runs further ahead and
 * each read returns more. On Windows it is a named pipe this process reads.
 * 'relayed': a stream this process reads and passes on, for a helper that gets no descriptor of
 * ours (the sudo broker, osascript, UAC: decoderOutputFor). The socket of 'stream' is this side of
 * the decoder's stdin, which Node never reads: copying it ends at once with "The operation was
 * aborted". So it is the pipe on the decoder's fd 3 that Node reads, as on Windows.
 * 'descriptor': a kernel pipe whose read end is a plain descriptor (verify-image reads an fd).
 * `file`: a regular file opened for writing, a batch's one decoded copy (source-feed.ts), which
 * the decoder fills as fast as it decodes while the cards read it.
 */
export type DecoderOutput = 'stream' | 'relayed' | 'descriptor' | { file: number };

/** The decoder's last reports (every 200 ms) that say whether it or its source is the slower: up to 2 s, a majority of those received. */
const BEHIND_WINDOW = 10;

function bitCount(bits: number): number {
  let count = 0;
  for (let rest = bits; rest !== 0; rest &= rest - 1) count += 1;
  return count;
}

export interface RunningDecoder {
  /**
   * What the decoded image is read from ('stream', 'relayed': the socket, 'descriptor': the pipe's read end);
   * null when the decoder only checks a file the helper reads itself.
   */
  readonly source: number | Readable | null;
  readonly ended: Promise<DecoderEnd>;
  /** Which decoder runs, once it has said so ("node:zlib gunzip", "xz -dc -T2 (system)"). */
  readonly decoder: Promise<string>;
  /** Source bytes read so far, for progress when the image size is not known. */
  sourceBytes(): number;
  /**
   * Whether the decoder, not its source, was the slower of the two lately: most of its last reports
   * found source bytes queued for it. A download whose bytes wait to be decoded is not the bottleneck.
   */
  decoderBehind(): boolean;
  /** Stops the decoder (the job is over) and closes this process's end of the pipe. */
  stop(): Promise<void>;
}

/**
 * The decoder's stdio and the descriptor it writes the image to. For 'stream', a socket pair made
 * as the decoder's stdin: Node never reads a child's stdin end, so no image byte can land in this
 * process; the decoder writes into its fd 0 (sockets go both ways). Windows' stdin pipes go one
 * way, so there, and for 'relayed' anywhere, the image comes out on a fd 3 pipe that this process
 * reads (and copies to the helper: see user/launcher/launch.ts).
 */
function decoderStdio(
  sendsImage: boolean,
  output: DecoderOutput,
  pipe: OsPipe | null,
): { stdio: StdioOptions; outFd: number } {
  if (!sendsImage) return { stdio: ['ignore', 'ignore', 'pipe', 'ignore', 'ipc'], outFd: -1 };
  if (pipe !== null) return { stdio: ['ignore', 'ignore', 'pipe', pipe.writeFd, 'ipc'], outFd: 3 };
  if (typeof output === 'object') return { stdio: ['ignore', 'ignore', 'pipe', output.file, 'ipc'], outFd: 3 };
  if (output === 'stream' && process.platform !== 'win32')
    return { stdio: ['pipe', 'ignore', 'pipe', 'ignore', 'ipc'], outFd: 0 };
  return { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'ipc'], outFd: 3 };
}

/**
 * What becomes of the decoder's skip messages: handed on to where the image goes, which resolves
 * once that has the ranges in place; only then does the decoder hear its SkipAck and go on.
 */
export type OnSkip = (extents: [number, number][], reason: SkipReason) => Promise<void>;

/** A decoder process, started and waiting for its plan (decode/main.ts takes its first message as the plan). */
interface DecoderProcess {
  child: ChildProcess;
  /** The kernel pipe it writes the image into ('descriptor' output); this process keeps the read end. */
  pipe: OsPipe | null;
  /** The stream it writes the image into ('stream', 'relayed' output); null with a pipe or a file, or without image output. */
  stream: Readable | null;
  /**
   * How it ended, watched from its start: a warm decoder can fail to start, or be killed, before
   * anyone runs a plan on it, and its 'close' would not come again.
   */
  closed: Promise<{ code: number | null; signal: NodeJS.Signals | null } | { error: Error }>;
}

/** Starts a decoder process that writes the image to `output` (or, `sendsImage` false, only checks a file). */
async function spawnDecoder(sendsImage: boolean, output: DecoderOutput): Promise<DecoderProcess> {
  const pipe = sendsImage && output === 'descriptor' && process.platform !== 'win32' ? await createOsPipe() : null;
  const { stdio, outFd } = decoderStdio(sendsImage, output, pipe);
  let child: ChildProcess;
  try {
    child = spawnImageChild(DECODER_ENTRY, DECODER_V8_FLAGS, [String(outFd)], stdio);
  } catch (error) {
    if (pipe !== null) await closeFd(pipe.readFd);
    throw error;
  } finally {
    // The decoder has its own copy now; ours would keep the reader from ever seeing the end.
    if (pipe !== null) await closeFd(pipe.writeFd);
  }
  // The stdin end is a socket, which reads as well (decoderStdio).
  const stream = (outFd === 0 ? child.stdin : outFd === 3 && pipe === null ? child.stdio[3] : null) as Readable | null;
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null } | { error: Error }>((resolve) => {
    child.on('error', (error) => resolve({ error }));
    child.on('close', (code, signal) => resolve({ code, signal }));
  });
  return { child, pipe, stream, closed };
}

/** Stops a decoder process (it writes nothing more) and closes this process's end of its pipe: once, whoever asks again. */
function stopper({ child, stream, pipe }: DecoderProcess): () => Promise<void> {
  let released = false;
  return async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    stream?.destroy();
    if (pipe !== null && !released) {
      released = true;
      await closeFd(pipe.readFd);
    }
  };
}

/**
 * A decoder process started before its plan is known, while the image is still being probed: the
 * process's start (Node and the decoder's modules, on the critical path of every flash that
 * decodes) then overlaps the probe's. It opens nothing until it has a plan. Handed to
 * startDecoder, or disposed of; a plan that sends no image (a raw file whose checksum is only
 * checked) gets a process of its own, since this one was started to write an image.
 */
export class WarmDecoder {
  private pending: Promise<DecoderProcess> | null;
  /** A plan runs on it: what it writes is the image feed's source. */
  taken = false;

  constructor(readonly output: DecoderOutput = 'stream') {
    this.pending = spawnDecoder(true, output);
    // A failed start is seen by whoever takes it; nobody may take it.
    this.pending.catch(() => undefined);
  }

  /**
   * What the image will come out of (the RunningDecoder's source once a plan runs on it), for a
   * helper started ahead of its job; null if the process could not be started, or was taken or
   * disposed of already.
   */
  async source(): Promise<number | Readable | null> {
    const started = await this.pending?.catch(() => null);
    if (started === null || started === undefined) return null;
    return started.pipe !== null ? started.pipe.readFd : started.stream;
  }

  /** The process, for a plan that sends the image to `output`; null once taken or disposed of, or for another plan. */
  take(plan: DecodePlan, output: DecoderOutput): Promise<DecoderProcess> | null {
    if (!plan.sendImage || output !== this.output || this.pending === null) return null;
    const pending = this.pending;
    this.pending = null;
    this.taken = true;
    return pending;
  }

  /** Stops the process unless it was taken: a flash refused, cancelled or read directly needs none. */
  async dispose(): Promise<void> {
    const pending = this.pending;
    this.pending = null;
    const unused = await pending?.catch(() => null);
    if (unused !== null && unused !== undefined) await stopper(unused)();
  }
}

/**
 * Starts decoding `plan`; see DecoderOutput for where the bytes go. A plan that looks for free space
 * needs `onSkip`; `notice` hears what the decoder tells the person flashing. A `warm` decoder
 * started earlier runs the plan if it fits it (WarmDecoder.take); the caller disposes of it either way.
 */
export async function startDecoder(
  plan: DecodePlan,
  output: DecoderOutput = 'stream',
  onSkip?: OnSkip,
  notice: (message: string) => void = () => undefined,
  warm?: WarmDecoder,
): Promise<RunningDecoder> {
  if (plan.freeSpace && onSkip === undefined)
    throw new Error('a decoder that leaves free space out needs someone to tell');
  const started = await (warm?.take(plan, output) ?? spawnDecoder(plan.sendImage, output));
  const { child, pipe, stream, closed } = started;
  const stopProcess = stopper(started);
  let sourceBytes = 0;
  /** Of the last BEHIND_WINDOW progress reports, those that found source bytes queued for decoding, as bits. */
  let behind = 0;
  let reports = 0;
  let stderr = '';
  let end: DecoderEnd | null = null;
  let stopped = false;
  let resolveDecoder!: (name: string) => void;
  const decoder = new Promise<string>((resolve) => (resolveDecoder = resolve));
  child.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr = (stderr + text).slice(-2048)));
  // The end message comes after the last image byte was handed to the kernel, and the decoder
  // exits right after it; the helper sees the end of the image only when it has. Once, under heavy
  // load, a decoder hung in its exit (main thread in a futex wait, most threads gone) and the
  // helper waited for it forever: a decoder that has said its last word gets a few seconds.
  const killIfStuck = () => {
    setTimeout(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }, EXIT_GRACE_MS).unref();
  };
  child.on('message', (message: DecoderMessage) => {
    switch (message.type) {
      case 'progress':
        sourceBytes = message.sourceBytes;
        behind = ((behind << 1) | (message.queued > 0 ? 1 : 0)) & ((1 << BEHIND_WINDOW) - 1);
        reports = Math.min(BEHIND_WINDOW, reports + 1);
        break;
      case 'started':
        resolveDecoder(message.decoder);
        break;
      case 'notice':
        notice(message.message);
        break;
      case 'end':
        end ??= message.ok
          ? { status: 'ok', bytes: message.bytes, sha256: message.sha256 }
          : { status: 'failed', failure: { code: message.code, message: message.message, offset: message.offset } };
        killIfStuck();
        break;
      case 'abandoned':
        end ??= { status: 'abandoned' };
        break;
      case 'skip':
        void onSkip?.(message.extents, message.reason).then(() => {
          const ack: SkipAck = { type: 'skip-ack' };
          if (child.connected) child.send(ack);
        });
        break;
    }
  });
  const ended = closed.then((how): DecoderEnd => {
    resolveDecoder('none');
    if ('error' in how)
      return (
        end ?? {
          status: 'failed',
          failure: { code: 'source-read-error', message: `The decoder could not be started: ${how.error.message}` },
        }
      );
    if (end !== null) return end;
    if (stopped) return { status: 'abandoned' };
    const why = how.signal !== null ? `killed by ${how.signal}` : `exit code ${how.code ?? '?'}`;
    const said = stderr.trim().split('\n').pop() ?? '';
    return {
      status: 'failed',
      failure: {
        code: 'source-read-error',
        message: `The decoder stopped unexpectedly (${why}${said ? `: ${said}` : ''}).`,
      },
    };
  });
  child.send(plan);
  return {
    source: pipe !== null ? pipe.readFd : stream,
    ended,
    decoder,
    sourceBytes: () => sourceBytes,
    decoderBehind: () => bitCount(behind) * 2 > reports,
    stop: () => {
      stopped = true;
      return stopProcess();
    },
  };
}
