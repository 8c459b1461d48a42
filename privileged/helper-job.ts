/**
 * One helper job over its channel: checks the job against what the user authorized, runs it
 * (run-job.ts), answers the channel's messages meanwhile, and ends once with the job's exit status.
 * A helper process serves one job (main.ts); an armed station's root side serves one per admitted
 * card, in its own process (armed-station.ts). What an end means (the process exits, or the
 * station reports the card done) is the caller's: JobEnds.
 */
import { jobDrives, ToHelper, type FromHelper, type HelperJob } from '../common/contracts/helper-protocol.js';
import { SkipInbox } from '../writer/skip-inbox.js';
import { sourceEndSignal } from '../writer/source-end.js';
import { OverlayInbox } from '../writer/overlay.js';
import { RepairInbox } from '../writer/repair-inbox.js';
import { ReadRequests } from '../writer/read-requests.js';
import { Channel, ProtocolError } from '../node/channel.js';
import { writesNothing, type HelperArgs } from '../node/helper-command-line.js';
import type { HelperEndpoints } from './endpoints.js';
import { cancelledBeforeStart, refusedAsFailed, runJob, type JobContext } from './run-job.js';
import { errorText } from '../common/domain/error-details.js';
import { jobError } from '../common/domain/failure.js';

/** How a helper ends: its process's exit status. 1 is sudo's, and 126 and 127 are pkexec's own. */
export const EXIT = {
  done: 0,
  badArguments: 2,
  noChannel: 3,
  /** The app went away, or a SIGTERM came, before the job ran. */
  stopped: 4,
  refused: 5,
} as const;

export interface JobEnds {
  /** The job is over with this status (EXIT); called once. */
  exit(code: number): void;
}

export interface ServedJob {
  /** Stops the job at its next block (it then syncs, closes the device and reports), or ends it at once if nothing was opened yet. */
  stop(): void;
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

/** Serves one job over `endpoints` for a helper started with `args`. */
export function serveJob(args: HelperArgs, endpoints: HelperEndpoints, ends: JobEnds): ServedJob {
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
        { type: 'fatal', code: 'protocol-error', message: `The helper refused its instructions: ${error.message}` },
        EXIT.refused,
      );
    } else {
      void channel.send({ type: 'log', level: 'warn', message: `stopping: ${error.message}` });
      // The job ends failed with this reason, not cancelled (writer/failures.ts refusedStop).
      controller.abort(jobError('protocol-error', `The helper refused its instructions: ${error.message}`));
    }
  };

  let ended = false;
  const endOnce = (code: number) => {
    if (ended) return;
    ended = true;
    ends.exit(code);
  };
  const finish = async (message: FromHelper, code: number) => {
    await channel.send(message);
    channel.close();
    endOnce(code);
  };
  // The app is gone (it exited or was killed), or asked to stop (a signal sudo relays, or the
  // station's word): stop at the next block, sync, close the device, report if anyone listens, end.
  const stop = () => {
    controller.abort();
    if (!started) endOnce(EXIT.stopped);
  };

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
          finish(refusedAsFailed(end, controller.signal), end.type === 'fatal' ? EXIT.refused : EXIT.done),
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
        if (!started) void finish(cancelledBeforeStart(job), EXIT.done);
      }
    },
    error: reject,
    close: stop,
  });
  void channel.send({ type: 'ready', pid: process.pid });
  return { stop };
}
