import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { Socket } from 'node:net';
import type { Progress } from '../common/progress.js';
import { FromHelper, type StartMessage, type ToHelper } from '../common/protocol.js';
import type { Failure, TargetResult } from '../common/result.js';
import { Channel } from './channel.js';

/**
 * V8 flags for the helper process, measured (1 GiB and 4 GiB raw images, loop device on /dev/shm):
 * the optimizing JIT tiers (Maglev, TurboFan) make an I/O-bound loop no faster but map several MB
 * more of the Node binary as a run gets longer, and a 1 MiB semi-space stops the young generation
 * from growing with the image. With them peak RSS no longer depends on the image size
 * (63.6 MB for 256 MiB, 63.9 MB for 4 GiB; without them 65.6 and 70.3 MB).
 */
export const HELPER_V8_FLAGS = ['--max-semi-space-size=1', '--no-opt', '--no-maglev'] as const;

/** The helper's entry point, next to this file in the build output. */
export const HELPER_ENTRY = fileURLToPath(new URL('./main.js', import.meta.url));

export interface HelperJobOptions {
  /** What the helper reads image bytes from (its fd 0): an open image file, or a decoder's output. */
  source: number | Readable;
  start: Omit<StartMessage, 'type'>;
  onProgress?: ((progress: Progress) => void) | undefined;
  onLog?: ((level: 'info' | 'warn', message: string) => void) | undefined;
}

export interface HelperJob {
  readonly pid: number | undefined;
  /** One result per target, in order; never rejects. */
  readonly result: Promise<TargetResult[]>;
  /** Asks the helper to stop at its next block; it then syncs, closes the device and reports. */
  cancel(): void;
}

function failAll(targets: readonly string[], failure: Failure): TargetResult[] {
  return targets.map((target) => ({ status: 'failed', target, bytes: 0, ...failure }));
}

function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return signal !== null ? `killed by ${signal}` : `exit code ${code ?? 'unknown'}`;
}

/**
 * Starts the helper as a direct child (the caller is already privileged). Elevated launches wrap
 * the same process and channel; see the elevation modules.
 */
export function startHelper(options: HelperJobOptions): HelperJob {
  const child: ChildProcess = spawn(process.execPath, [...HELPER_V8_FLAGS, HELPER_ENTRY], {
    stdio: [options.source, 'inherit', 'inherit', 'pipe'],
    // Inside Electron, process.execPath is the app binary; this makes it behave as plain Node.
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
  });
  const targets = options.start.targets;
  let settled: TargetResult[] | null = null;
  let resolveResult!: (results: TargetResult[]) => void;
  const result = new Promise<TargetResult[]>((resolve) => (resolveResult = resolve));
  const settle = (results: TargetResult[]) => {
    settled ??= results;
  };

  const channel = new Channel<FromHelper, ToHelper>(child.stdio[3] as Socket, FromHelper, {
    message: (message) => {
      switch (message.type) {
        case 'progress': {
          const { type: _type, ...progress } = message;
          options.onProgress?.(progress);
          break;
        }
        case 'log':
          options.onLog?.(message.level, message.message);
          break;
        case 'result':
          settle(message.results);
          break;
        case 'fatal':
          settle(failAll(targets, { code: message.code, message: message.message }));
          break;
      }
    },
    error: (error) => {
      settle(failAll(targets, { code: 'protocol-error', message: `The writing process sent something invalid (${error.message}); the device may be incomplete.` }));
      child.kill('SIGTERM');
    },
    close: () => undefined,
  });

  child.on('error', (error) => {
    settle(failAll(targets, { code: 'helper-died', message: `The writing process could not start: ${error.message}` }));
    resolveResult(settled ?? []);
  });
  child.on('exit', (code, signal) => {
    resolveResult(
      settled ??
        failAll(targets, {
          code: 'helper-died',
          message: `The writing process stopped unexpectedly (${describeExit(code, signal)}). The device is incomplete; flash it again before use.`,
        }),
    );
  });

  void channel.send({ type: 'start', ...options.start });
  return {
    pid: child.pid,
    result,
    cancel: () => void channel.send({ type: 'cancel' }),
  };
}
