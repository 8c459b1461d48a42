/**
 * The privileged helper: runs exactly one flash job and exits.
 *
 * Command line (node/helper-command-line.ts): how its channel arrives, the app's pid to watch, and the target
 * drives the user authorized. Through the channel (open-endpoints.ts), which it only ever
 * opens as a client (an inherited socket on fd 3, FIFOs the unprivileged app made, or Windows
 * named pipes the app created; it binds and listens on nothing), it receives one start message
 * and possibly a cancel, and sends ready, progress, log and result (common/contracts/helper-protocol.ts).
 *
 * Image bytes come from a descriptor: fd 0 (the image file itself, or a pipe from the
 * unprivileged decoder) or an image FIFO when the elevation tool passes no descriptors. The
 * helper opens no image path and never parses an archive as root. The only paths it opens are
 * the target devices, after the engine's own fresh checks, and its channel FIFOs, after the
 * checks in fifo-endpoints.ts.
 *
 * Two jobs read a whole disk instead (--source, after the same kind of checks, read-only): a
 * clone writes it to the targets as the image, and a backup (a read message) sends its bytes out
 * through fd 0 to the unprivileged side, which writes the user's file: root never writes there.
 * A verify message also names its disk with --source: it is compared with the image on fd 0 and
 * only read.
 */
import { jobDrives, ToHelper, type FromHelper, type JobMessage, type ReadMessage, type StartMessage, type VerifyMessage } from '../common/contracts/helper-protocol.js';
import type { Failure, TargetResult } from '../common/domain/result.js';
import { toFailure } from '../writer/failures.js';
import { flash } from '../writer/flash.js';
import { currentPlatform } from '../writer/platform/index.js';
import { sendDevice, SourceDevice } from '../writer/source-device.js';
import { verifyImage } from '../writer/verify-image.js';
import { sourceEndSignal } from '../writer/source-end.js';
import { Channel, ProtocolError } from '../node/channel.js';
import { parseHelperArgv, type HelperArgs } from '../node/helper-command-line.js';
import type { HelperEndpoints } from './endpoints.js';
import { openHelperEndpoints } from './open-endpoints.js';
import { watchParent } from './parent-watch.js';
import { errorText } from '../common/domain/error-details.js';

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

function cancelledBeforeWriting(job: JobMessage): FromHelper {
  return { type: 'result', results: jobDrives(job).reported.map((target) => ({ status: 'cancelled', target, bytes: 0 })) };
}

function failedBeforeWriting(job: JobMessage, failure: Failure): FromHelper {
  return { type: 'result', results: jobDrives(job).reported.map((target): TargetResult => ({ status: 'failed', target, bytes: 0, ...failure })) };
}

/**
 * The message must name exactly the drives on the command line, which is what the user
 * authorized: the targets to write, and the drive to read (a clone's or a backup's source, or
 * the disk a verify compares).
 */
function authorizationMismatch(args: HelperArgs, job: JobMessage): string | null {
  const { writes: targets, reads: source } = jobDrives(job);
  const authorized = args.targets;
  if (authorized.length === targets.length && authorized.every((t, i) => t === targets[i]) && source === args.source) return null;
  const describe = (writes: readonly string[], reads: string | null) => [writes.length > 0 ? `writing ${writes.join(', ')}` : '', reads !== null ? `reading ${reads}` : ''].filter(Boolean).join(' and ');
  return `the ${job.type} message asks for ${describe(targets, source)}, but the helper was started for ${describe(authorized, args.source)}`;
}

/**
 * The engine speaks of an image; a clone's image is a disk. A read of it that failed or ended
 * early is said in the disk's terms: unplugged (it is gone or changed size), or failing.
 */
async function explainSourceDisk(disk: SourceDevice, result: TargetResult): Promise<TargetResult> {
  if (result.status !== 'failed' || (result.code !== 'source-read-error' && result.code !== 'source-truncated')) return result;
  const { failure } = await disk.readFailure(Object.assign(new Error(result.message), { code: 'EIO' }), result.offset ?? result.bytes);
  return { ...result, ...failure };
}

function runHelper(args: HelperArgs, endpoints: HelperEndpoints): void {
  // A terminal's Ctrl-C reaches the whole process group, and sudo relays it. The parent decides
  // what it means and says so with a cancel message; dying here would leave the device without
  // a clean stop.
  process.on('SIGINT', () => undefined);

  const controller = new AbortController();
  const sourceEnd = sourceEndSignal();
  let job: JobMessage | null = null;
  /** Until the engine runs there is nothing on a device to stop cleanly. */
  let flashing = false;

  /** A clone's source disk, opened after its checks; the targets may not include it. */
  const openSourceDisk = async (start: StartMessage, path: string): Promise<SourceDevice | FromHelper> => {
    const platform = await currentPlatform();
    let disk: SourceDevice;
    try {
      disk = await SourceDevice.open(path, platform);
    } catch (error) {
      return failedBeforeWriting(start, toFailure(error));
    }
    for (const target of start.targets) {
      const facts = await platform.inspect(target);
      if (facts.exists && facts.rdev === disk.facts.rdev) {
        await disk.close();
        return failedBeforeWriting(start, { code: 'target-is-source', message: `${target} is the drive being copied; choose another drive to write to.` });
      }
    }
    return disk;
  };

  const run = async (start: StartMessage): Promise<void> => {
    let source: number;
    let disk: SourceDevice | null = null;
    if (start.sourceDevice !== undefined) {
      const opened = await openSourceDisk(start, start.sourceDevice);
      if (!(opened instanceof SourceDevice)) return finish(channel, opened, EXIT.done);
      disk = opened;
      source = disk.fd;
    } else {
      try {
        source = await endpoints.image();
      } catch (error) {
        return finish(channel, { type: 'fatal', code: 'protocol-error', message: `The helper could not open the image stream: ${errorText(error)}` }, EXIT.refused);
      }
    }
    if (controller.signal.aborted) {
      await disk?.close();
      return finish(channel, cancelledBeforeWriting(start), EXIT.done);
    }
    flashing = true;
    const results = await flash({
      source,
      // A disk is as big as the helper's own look at it says, whatever the message claimed.
      imageSize: disk?.facts.size ?? start.imageSize,
      sourceSeekable: disk === null && start.sourceSeekable,
      targets: start.targets,
      verify: start.verify,
      eject: start.eject === true,
      extents: start.extents,
      sourceEnd: start.awaitSourceEnd === true ? sourceEnd.signal : undefined,
      signal: controller.signal,
      onProgress: (p) => void channel.send({ type: 'progress', ...p }),
    });
    const explained = disk === null ? results : await Promise.all(results.map((r) => explainSourceDisk(disk, r)));
    await disk?.close();
    await finish(channel, { type: 'result', results: explained }, EXIT.done);
  };

  /** A backup: the source disk's bytes out through fd 0; nothing is written here. */
  const runRead = async (read: ReadMessage): Promise<void> => {
    let disk: SourceDevice;
    try {
      disk = await SourceDevice.open(read.source, await currentPlatform());
    } catch (error) {
      return finish(channel, failedBeforeWriting(read, toFailure(error)), EXIT.done);
    }
    if (read.size !== undefined && disk.facts.size !== read.size) {
      await disk.close();
      const message = `${read.source} is not the drive that was checked: it holds ${disk.facts.size} bytes, not ${read.size} (another card in the same reader?). Nothing was read.`;
      return finish(channel, failedBeforeWriting(read, { code: 'source-read-error', message }), EXIT.done);
    }
    let out: number;
    try {
      out = await endpoints.driveOut();
    } catch (error) {
      await disk.close();
      return finish(channel, { type: 'fatal', code: 'protocol-error', message: `The helper could not open the way out to the app: ${errorText(error)}` }, EXIT.refused);
    }
    flashing = true;
    const result = await sendDevice(disk, out, controller.signal);
    await disk.close();
    await finish(channel, { type: 'result', results: [result] }, EXIT.done);
  };

  /** `sluice verify`: the disk compared with the image on fd 0; nothing is written. */
  const runVerify = async (verify: VerifyMessage): Promise<void> => {
    let source: number;
    try {
      source = await endpoints.image();
    } catch (error) {
      return finish(channel, { type: 'fatal', code: 'protocol-error', message: `The helper could not open the image stream: ${errorText(error)}` }, EXIT.refused);
    }
    flashing = true;
    const result = await verifyImage({ source, imageSize: verify.imageSize, target: verify.device, disksOnly: true, signal: controller.signal, onProgress: (p) => void channel.send({ type: 'progress', ...p }) });
    await finish(channel, { type: 'result', results: [result] }, EXIT.done);
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
      if (message.type === 'start' || message.type === 'read' || message.type === 'verify') {
        if (job !== null) return reject(new ProtocolError(`a second ${message.type} message`));
        const mismatch = authorizationMismatch(args, message);
        if (mismatch !== null) return reject(new ProtocolError(mismatch));
        job = message;
        void (message.type === 'start' ? run(message) : message.type === 'read' ? runRead(message) : runVerify(message));
      } else if (job === null) {
        reject(new ProtocolError(`${message.type} before start`));
      } else if (message.type === 'source-end') {
        sourceEnd.settle(message.ok ? { ok: true, bytes: message.bytes } : { ok: false, failure: { code: message.code, message: message.message, offset: message.offset } });
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
    die(EXIT.badArguments, errorText(error));
  }
  let endpoints: HelperEndpoints;
  try {
    endpoints = await openHelperEndpoints(args.transport);
  } catch (error) {
    die(EXIT.noChannel, `cannot open the channel to the app: ${errorText(error)}`);
  }
  runHelper(args, endpoints);
}

await main();
