/**
 * The parent's side of the decoder process (decode/main.ts): starts it with the user's rights,
 * gives it the write end of a pipe whose read end becomes the helper's fd 0, and turns whatever
 * happens to it into one DecoderEnd.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { Failure } from '../common/result.js';
import { closeFd } from '../engine/io.js';
import type { DecodePlan, DecoderMessage } from './decode/plan.js';
import { createOsPipe } from './os-pipe.js';

/**
 * V8 flags for the decoder, as for the helper (worker/helper/helper-program.ts): a 1 MiB
 * semi-space collects the per-chunk Buffers of a stream promptly instead of letting the young
 * generation grow with the image.
 */
const DECODER_V8_FLAGS = ['--max-semi-space-size=1'] as const;

/** The decoder's entry point, next to this file in the build output. */
const DECODER_ENTRY = fileURLToPath(new URL('./decode/main.js', import.meta.url));

/** How the decoder ended. */
export type DecoderEnd =
  | { status: 'ok'; bytes: number | null; sha256: string | null }
  | { status: 'failed'; failure: Failure }
  /** The helper stopped reading first, or the decoder was stopped: the helper's result stands. */
  | { status: 'abandoned' };

export interface RunningDecoder {
  /**
   * What the helper reads: the pipe's read end, or (where there are no FIFOs) the decoder's
   * stdout; null when the decoder only checks a file the helper reads itself.
   */
  readonly source: number | Readable | null;
  readonly ended: Promise<DecoderEnd>;
  /** Which decoder runs, once it has said so ("node:zlib gunzip", "xz -dc -T2 (system)"). */
  readonly decoder: Promise<string>;
  /** Source bytes read so far, for progress when the image size is not known. */
  sourceBytes(): number;
  /** Stops the decoder (the job is over) and closes this process's end of the pipe. */
  stop(): Promise<void>;
}

/** Starts decoding `plan` into a new pipe. */
export async function startDecoder(plan: DecodePlan): Promise<RunningDecoder> {
  const pipe = plan.sendImage && process.platform !== 'win32' ? await createOsPipe() : null;
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [...DECODER_V8_FLAGS, DECODER_ENTRY], {
      // The image goes out on fd 3 (see decode/decode-image.ts IMAGE_OUT_FD).
      stdio: ['ignore', 'ignore', 'pipe', pipe !== null ? pipe.writeFd : plan.sendImage ? 'pipe' : 'ignore', 'ipc'],
      env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
    });
  } finally {
    // The decoder has its own copy now; ours would keep the helper from ever seeing the end.
    if (pipe !== null) await closeFd(pipe.writeFd);
  }
  let sourceBytes = 0;
  let stderr = '';
  let end: DecoderEnd | null = null;
  let stopped = false;
  let resolveDecoder!: (name: string) => void;
  const decoder = new Promise<string>((resolve) => (resolveDecoder = resolve));
  child.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr = (stderr + text).slice(-2048)));
  child.on('message', (message: DecoderMessage) => {
    switch (message.type) {
      case 'progress':
        sourceBytes = message.sourceBytes;
        break;
      case 'started':
        resolveDecoder(message.decoder);
        break;
      case 'end':
        end ??= message.ok ? { status: 'ok', bytes: message.bytes, sha256: message.sha256 } : { status: 'failed', failure: { code: message.code, message: message.message, offset: message.offset } };
        break;
      case 'abandoned':
        end ??= { status: 'abandoned' };
        break;
    }
  });
  const ended = new Promise<DecoderEnd>((resolve) => {
    child.on('error', (error) => resolve(end ?? { status: 'failed', failure: { code: 'source-read-error', message: `The decoder could not be started: ${error.message}` } }));
    child.on('close', (code, signal) => {
      resolveDecoder('none');
      if (end !== null) return resolve(end);
      if (stopped) return resolve({ status: 'abandoned' });
      const why = signal !== null ? `killed by ${signal}` : `exit code ${code ?? '?'}`;
      const said = stderr.trim().split('\n').pop() ?? '';
      resolve({ status: 'failed', failure: { code: 'source-read-error', message: `The decoder stopped unexpectedly (${why}${said ? `: ${said}` : ''}); the device is incomplete.` } });
    });
  });
  child.send(plan);
  let released = false;
  return {
    source: pipe !== null ? pipe.readFd : ((child.stdio[3] as Readable | null) ?? null),
    ended,
    decoder,
    sourceBytes: () => sourceBytes,
    stop: async () => {
      stopped = true;
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      if (pipe !== null && !released) {
        released = true;
        await closeFd(pipe.readFd);
      }
    },
  };
}
