/**
 * The privileged helper: runs exactly one flash job and exits.
 *
 * Command line (helper-args.ts): how its channel arrives, the app's pid to watch, and the target
 * drives the user authorized. Through the channel (helper-endpoints.ts), which it only ever
 * opens as a client (an inherited socket on fd 3, FIFOs the unprivileged app made, or Windows
 * named pipes the app created; it binds and listens on nothing), it receives one start message
 * and possibly a cancel, and sends ready, progress, log and result (worker/common/protocol.ts).
 *
 * Image bytes come from a descriptor: fd 0 (the image file itself, or a pipe from the
 * unprivileged decoder) or an image FIFO when the elevation tool passes no descriptors. The
 * helper opens no image path and never parses an archive as root. The only paths it opens are
 * the target devices, after the engine's own fresh checks, and its channel FIFOs, after the
 * checks in helper-fifos.ts.
 */
import { ToHelper, type FromHelper, type StartMessage } from '../common/protocol.js';
import { flash } from '../engine/flash.js';
import { Channel, ProtocolError } from './channel.js';
import { parseHelperArgv, type HelperArgs } from './helper-args.js';
import { openHelperEndpoints, type HelperEndpoints } from './helper-endpoints.js';
import { watchParent } from './parent-watch.js';

/** How the helper exits when it never ran a job. 1 is sudo's, and 126 and 127 are pkexec's own. */
const EXIT = {
  done: 0,
  badArguments: 2,
  noChannel: 3,
  /** The app went away, or a SIGTERM came, before the job ran. */
  stopped: 4,
  refused: 5,
} as const;

function die(code: number, message: string): never {
  process.stderr.write(`sluice-helper: ${message}\n`);
  process.exit(code);
}

async function finish(channel: Channel<ToHelper, FromHelper>, message: FromHelper, exitCode: number): Promise<never> {
  await channel.send(message);
  channel.close();
  process.exit(exitCode);
}

function cancelledBeforeWriting(start: StartMessage): FromHelper {
  return { type: 'result', results: start.targets.map((target) => ({ status: 'cancelled', target, bytes: 0 })) };
}

/** The start message must name exactly the drives on the command line, which is what the user authorized. */
function targetsMismatch(authorized: readonly string[], requested: readonly string[]): string | null {
  if (authorized.length === requested.length && authorized.every((t, i) => t === requested[i])) return null;
  return `the start message names ${requested.join(', ')}, but the helper was started for ${authorized.join(', ')}`;
}

function runHelper(args: HelperArgs, endpoints: HelperEndpoints): void {
  // A terminal's Ctrl-C reaches the whole process group, and sudo relays it. The parent decides
  // what it means and says so with a cancel message; dying here would leave the device without
  // a clean stop.
  process.on('SIGINT', () => undefined);

  const controller = new AbortController();
  let job: StartMessage | null = null;
  /** Until the engine runs there is nothing on a device to stop cleanly. */
  let flashing = false;

  const run = async (start: StartMessage): Promise<void> => {
    let source: number;
    try {
      source = await endpoints.image();
    } catch (error) {
      return finish(channel, { type: 'fatal', code: 'protocol-error', message: `The helper could not open the image stream: ${error instanceof Error ? error.message : String(error)}` }, EXIT.refused);
    }
    if (controller.signal.aborted) return finish(channel, cancelledBeforeWriting(start), EXIT.done);
    flashing = true;
    const results = await flash({
      source,
      imageSize: start.imageSize,
      sourceSeekable: start.sourceSeekable,
      targets: start.targets,
      verify: start.verify,
      eject: start.eject === true,
      signal: controller.signal,
      onProgress: (p) => void channel.send({ type: 'progress', ...p }),
    });
    await finish(channel, { type: 'result', results }, EXIT.done);
  };

  const reject = (error: ProtocolError) => {
    if (job === null) {
      // Nothing has been opened yet, let alone written.
      void finish(channel, { type: 'fatal', code: 'protocol-error', message: `The helper refused its instructions: ${error.message}` }, EXIT.refused);
    } else {
      void channel.send({ type: 'log', level: 'warn', message: `stopping: ${error.message}` });
      controller.abort();
    }
  };

  // The app is gone (it exited or was killed), or asked through a signal (sudo relays the ones
  // it gets): stop at the next block, sync, close the device, report if anyone listens, exit.
  const stop = () => {
    controller.abort();
    if (!flashing) process.exit(EXIT.stopped);
  };
  process.on('SIGTERM', stop);

  const channel: Channel<ToHelper, FromHelper> = new Channel(endpoints, ToHelper, {
    message: (message) => {
      if (message.type === 'start') {
        if (job !== null) return reject(new ProtocolError('a second start message'));
        const mismatch = targetsMismatch(args.targets, message.targets);
        if (mismatch !== null) return reject(new ProtocolError(mismatch));
        job = message;
        void run(message);
      } else if (job === null) {
        reject(new ProtocolError('cancel before start'));
      } else {
        controller.abort();
        // Still waiting for the app to open the image FIFO: nothing is open, so report at once.
        if (!flashing) void finish(channel, cancelledBeforeWriting(job), EXIT.done);
      }
    },
    error: reject,
    close: stop,
  });
  void channel.send({ type: 'ready', pid: process.pid });
  if (args.parentPid !== null) watchParent(args.parentPid, stop);
}

async function main(): Promise<void> {
  let args: HelperArgs;
  try {
    args = parseHelperArgv(process.argv.slice(2));
  } catch (error) {
    die(EXIT.badArguments, error instanceof Error ? error.message : String(error));
  }
  let endpoints: HelperEndpoints;
  try {
    endpoints = await openHelperEndpoints(args.transport);
  } catch (error) {
    die(EXIT.noChannel, `cannot open the channel to the app: ${error instanceof Error ? error.message : String(error)}`);
  }
  runHelper(args, endpoints);
}

await main();
