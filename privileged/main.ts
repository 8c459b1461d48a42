/**
 * The privileged helper: runs exactly one job (a flash, a clone, a backup or a verify) and exits;
 * or, with --station, arms a flashing station that starts one such helper per admitted card
 * (armed-station.ts).
 *
 * Command line (node/helper-command-line.ts): how its channel arrives, the app's pid to watch, and
 * the drives the user authorized it to write (the targets) and to read (--source). Through the
 * channel (open-endpoints.ts), which it only ever opens as a client (an inherited socket on fd 3,
 * FIFOs the unprivileged app made, or Windows named pipes the app created; it binds and listens on
 * nothing), it receives one job message and possibly a cancel and the image stream's end, and
 * sends ready, progress, log and result (common/contracts/helper-protocol.ts).
 *
 * Image bytes come from a descriptor: fd 0 (the image file itself, or a pipe from the unprivileged
 * decoder) or an image FIFO when the elevation tool passes no descriptors. The helper opens no
 * image path and never parses an archive as root. The only paths it opens are the drives it was
 * authorized for, after the writer's own fresh checks, and its channel FIFOs, after the checks in
 * fifo-endpoints.ts. What each job does is in run-job.ts.
 */
import { jobDrives, ToHelper, type FromHelper, type HelperJob } from '../common/contracts/helper-protocol.js';
import { SkipInbox } from '../writer/skip-inbox.js';
import { sourceEndSignal } from '../writer/source-end.js';
import { OverlayInbox } from '../writer/overlay.js';
import { RepairInbox } from '../writer/repair-inbox.js';
import { ReadRequests } from '../writer/read-requests.js';
import { Channel, ProtocolError } from '../node/channel.js';
import { parseHelperArgv, writesNothing, type HelperArgs } from '../node/helper-command-line.js';
import { exitProcess } from '../node/process-exit.js';
import type { HelperEndpoints } from './endpoints.js';
import { openHelperEndpoints } from './open-endpoints.js';
import { watchParent } from './parent-watch.js';
import { sizeThreadPool } from './thread-pool.js';
import { cancelledBeforeStart, refusedAsFailed, runJob, type JobContext } from './run-job.js';
import { errorText } from '../common/domain/error-details.js';
import { jobError } from '../common/domain/failure.js';

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
  exitProcess(code);
}

async function finish(channel: Channel<ToHelper, FromHelper>, message: FromHelper, exitCode: number): Promise<never> {
  await channel.send(message);
  channel.close();
  // A cancelled job may have left a read of a stalled source behind (writer/pump.ts): exitProcess ends the process all the same.
  exitProcess(exitCode);
}

/**
 * The job must name exactly the drives on the command line, which is what the user authorized:
 * the targets to write, and the drive to read (a clone's or a backup's source, or the disk a
 * verify compares).
 */
function authorizationMismatch(args: HelperArgs, job: HelperJob): string | null {
  const { writes: targets, reads: source } = jobDrives(job);
  const authorized = args.targets;
  // What the password prompt promised for a --read-only helper (build/polkit/): the drive is only read.
  if (writesNothing(args) && targets.length > 0)
    return `the helper was started read-only (--read-only), and the ${job.kind} job would write ${targets.join(', ')}`;
  // A station card's helper: the card root admitted, and no other (a card swapped since is refused when opened).
  if (args.medium !== undefined && (job.kind !== 'flash' || job.media?.length !== 1 || job.media[0] !== args.medium))
    return `the ${job.kind} job is not a flash of the medium the station admitted (diskseq ${args.medium})`;
  if (job.kind === 'flash' && job.overlayBytes !== undefined && job.overlayBytes.length !== targets.length)
    return `the flash job announces customisations for ${job.overlayBytes.length} drives but writes ${targets.length}`;
  if (authorized.length === targets.length && authorized.every((t, i) => t === targets[i]) && source === args.source)
    return null;
  const describe = (writes: readonly string[], reads: string | null) =>
    [writes.length > 0 ? `writing ${writes.join(', ')}` : '', reads !== null ? `reading ${reads}` : '']
      .filter(Boolean)
      .join(' and ');
  return `the ${job.kind} job asks for ${describe(targets, source)}, but the helper was started for ${describe(authorized, args.source)}`;
}

/** The overlay bytes a job announces, per target: a flash's per drive, a verify's for its one drive. */
function announcedOverlays(job: HelperJob): number[] {
  if (job.kind === 'flash') return job.overlayBytes ?? [];
  if (job.kind === 'verify' && job.overlayBytes !== undefined) return [job.overlayBytes];
  return [];
}

function runHelper(args: HelperArgs, endpoints: HelperEndpoints): void {
  // A terminal's Ctrl-C reaches the whole process group, and sudo relays it. The parent decides
  // what it means and says so with a cancel message; dying here would leave the device without
  // a clean stop.
  process.on('SIGINT', () => undefined);

  const controller = new AbortController();
  const sourceEnd = sourceEndSignal();
  const skips = new SkipInbox();
  let job: HelperJob | null = null;
  /** Until the job holds a device there is nothing on it to stop cleanly. */
  let started = false;

  const reject = (error: ProtocolError) => {
    if (job === null) {
      // Nothing has been opened yet, let alone written.
      void finish(
        channel,
        { type: 'fatal', code: 'protocol-error', message: `The helper refused its instructions: ${error.message}` },
        EXIT.refused,
      );
    } else {
      void channel.send({ type: 'log', level: 'warn', message: `stopping: ${error.message}` });
      // The job ends failed with this reason, not cancelled (writer/failures.ts refusedStop).
      controller.abort(jobError('protocol-error', `The helper refused its instructions: ${error.message}`));
    }
  };

  // The app is gone (it exited or was killed), or asked through a signal (sudo relays the ones
  // it gets): stop at the next block, sync, close the device, report if anyone listens, exit.
  const stop = () => {
    controller.abort();
    if (!started) exitProcess(EXIT.stopped);
  };
  process.on('SIGTERM', stop);

  const context: JobContext = {
    endpoints,
    signal: controller.signal,
    sourceEnd: sourceEnd.signal,
    skips,
    overlays: new OverlayInbox([]),
    repairs: new RepairInbox((message) => void channel.send(message)),
    reads: new ReadRequests(),
    progress: (p) => void channel.send({ type: 'progress', ...p }),
    started: () => (started = true),
  };

  const channel: Channel<ToHelper, FromHelper> = new Channel(endpoints, ToHelper, {
    message: (message) => {
      if (message.type === 'job') {
        if (job !== null) return reject(new ProtocolError(`a second job message (${message.job.kind})`));
        const mismatch = authorizationMismatch(args, message.job);
        if (mismatch !== null) return reject(new ProtocolError(mismatch));
        job = message.job;
        context.overlays = new OverlayInbox(announcedOverlays(job));
        void runJob(job, context).then((end) =>
          finish(channel, refusedAsFailed(end, controller.signal), end.type === 'fatal' ? EXIT.refused : EXIT.done),
        );
      } else if (job === null) {
        reject(new ProtocolError(`${message.type} before start`));
      } else if (message.type === 'skip') {
        if (job.kind !== 'flash' && job.kind !== 'verify')
          return reject(new ProtocolError(`a skip message for a ${job.kind} job`));
        skips.deliver(message.extents).then(
          () => void channel.send({ type: 'skip-ack' }),
          (error: unknown) => reject(new ProtocolError(`a skip the job cannot take: ${errorText(error)}`)),
        );
      } else if (message.type === 'overlay') {
        const refused = context.overlays.add(message.target, message.offset, Buffer.from(message.data, 'base64'));
        if (refused !== null) reject(new ProtocolError(refused));
      } else if (
        message.type === 'repair-data' ||
        message.type === 'repair-progress' ||
        message.type === 'repair-failed'
      ) {
        const refused = context.repairs.deliver(message);
        if (refused !== null) reject(new ProtocolError(refused));
      } else if (message.type === 'read') {
        if (job.kind !== 'backup' || job.requested !== true)
          return reject(new ProtocolError(`a read message for a ${job.kind} job that asked for none`));
        const refused = context.reads.deliver(message.ranges, message.last);
        if (refused !== null) reject(new ProtocolError(refused));
      } else if (message.type === 'source-end') {
        if (message.ok) {
          sourceEnd.settle({ ok: true, bytes: message.bytes });
        } else {
          const { type: _type, ok: _ok, ...failure } = message;
          sourceEnd.settle({ ok: false, failure });
        }
      } else {
        controller.abort();
        // Still waiting for the app to open the image FIFO: nothing is open, so report at once.
        if (!started) void finish(channel, cancelledBeforeStart(job), EXIT.done);
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
  // Before the channel is opened: opening a FIFO is the first call that starts the pool.
  sizeThreadPool(args.targets.length);
  let endpoints: HelperEndpoints;
  try {
    endpoints = await openHelperEndpoints(args.transport);
  } catch (error) {
    die(EXIT.noChannel, `cannot open the channel to the app: ${errorText(error)}`);
  }
  if (args.station === undefined) return runHelper(args, endpoints);
  const { runArmedStation } = await import('./armed-station.js');
  await runArmedStation(args, args.station, endpoints);
}

await main();
