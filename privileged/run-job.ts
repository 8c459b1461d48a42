/**
 * The five jobs the helper runs, one function each. Each opens what its job needs (the image
 * descriptor, a source disk after its checks), hands it to the writer, and resolves with the one
 * message that ends the job: a result per reported drive, or a fatal message when the job could
 * not even start; runJob turns anything unforeseen into a failed result, so it never rejects.
 *
 * Each job imports its writer modules when it runs: a check needs none of the flash's pump,
 * verification and repair, and a helper that loads only its own job starts sooner (measured in
 * the commit that made these imports lazy).
 */
import type { Writable } from 'node:stream';
import { jobDrives, type FromHelper, type HelperJob, type HelperJobOf } from '../common/contracts/helper-protocol.js';
import { errorText } from '../common/domain/error-details.js';
import { toFailure, type Failure } from '../common/domain/failure.js';
import type { Progress } from '../common/domain/progress.js';
import type { TargetResult } from '../common/domain/result.js';
import { mayNeverReturn } from '../node/process-exit.js';
import { currentPlatform } from '../writer/platform/index.js';
import { refuseDriveName } from '../writer/drive-name.js';
import { refusedStop } from '../writer/failures.js';
import type { SourceDevice } from '../writer/source-device.js';
import type { SkipInbox } from '../writer/skip-inbox.js';
import type { SourceEndSignal } from '../writer/source-end.js';
import type { OverlayInbox } from '../writer/overlay.js';
import type { RepairInbox } from '../writer/repair-inbox.js';
import type { ReadRequests } from '../writer/read-requests.js';
import type { HelperEndpoints } from './endpoints.js';

export interface JobContext {
  endpoints: HelperEndpoints;
  /** The app's cancel, or the app gone. */
  signal: AbortSignal;
  /** The unprivileged side's word on the image stream (source-end messages). */
  sourceEnd: SourceEndSignal;
  /** Ranges the unprivileged side leaves out of the image stream as it goes (skip messages). */
  skips: SkipInbox;
  /** The bytes each target gets after the image (overlay messages), as the job announced them. */
  overlays: OverlayInbox;
  /** The image's bytes again, for a repair of a flash whose image came as a stream (repair-request, repair-data). */
  repairs: RepairInbox;
  /** The ranges a backup of requested ranges sends (read messages). */
  reads: ReadRequests;
  progress(progress: Progress): void;
  /** Called once the job holds a device: from then on a stop must be clean, not an exit. */
  started(): void;
}

/**
 * A job the helper stopped because it refused its instructions (a second job, an unrequested
 * repair, a skip it cannot take) failed with that reason: whichever step noticed the stop first
 * may have called it a cancel, and only the app's own cancel is one.
 */
export function refusedAsFailed(end: FromHelper, signal: AbortSignal): FromHelper {
  const failure = refusedStop(signal);
  if (failure === null || end.type !== 'result') return end;
  return {
    ...end,
    results: end.results.map((r): TargetResult =>
      r.status === 'cancelled' ? { ...r, status: 'failed', ...failure } : r,
    ),
  };
}

export function cancelledBeforeStart(job: HelperJob): FromHelper {
  return {
    type: 'result',
    results: jobDrives(job).reported.map((target) => ({ status: 'cancelled', target, bytes: 0 })),
  };
}

function failedBeforeStart(job: HelperJob, failure: Failure): FromHelper {
  return {
    type: 'result',
    results: jobDrives(job).reported.map((target): TargetResult => ({
      status: 'failed',
      target,
      bytes: 0,
      ...failure,
    })),
  };
}

/** The image's descriptor (a FIFO waits for the app to open its end), or the message that ends a job that cannot have it. */
async function imageSource(context: JobContext): Promise<number | FromHelper> {
  try {
    const opening = context.endpoints.image();
    // An image FIFO the app never opens (it died first) never opens here either.
    mayNeverReturn(opening);
    return await opening;
  } catch (error) {
    return {
      type: 'fatal',
      code: 'protocol-error',
      message: `The helper could not open the image stream: ${errorText(error)}`,
    };
  }
}

/** The writer speaks of an image; a clone's image is a disk, and a read of it that failed or ended early is said in the disk's terms. */
async function explainSourceDisk(disk: SourceDevice, result: TargetResult): Promise<TargetResult> {
  if (result.status !== 'failed' || (result.code !== 'source-read-error' && result.code !== 'source-truncated'))
    return result;
  const { failure } = await disk.readFailure(
    Object.assign(new Error(result.message), { code: 'EIO' }),
    result.offset ?? result.bytes,
  );
  return { ...result, ...failure };
}

/** A flash: the image on fd 0 (or the image FIFO) written to the targets. */
async function runFlash(job: HelperJobOf<'flash'>, context: JobContext): Promise<FromHelper> {
  const source = await imageSource(context);
  if (typeof source !== 'number') return source;
  if (context.signal.aborted) return cancelledBeforeStart(job);
  context.started();
  const { flash } = await import('../writer/flash.js');
  const results = await flash({
    source,
    imageSize: job.imageSize,
    sourceSeekable: job.sourceSeekable,
    sourceGrows: job.sourceGrows === true && job.awaitSourceEnd === true,
    targets: job.targets,
    media: job.media,
    verify: job.verify,
    eject: job.eject === true,
    capacityCheck: job.capacityCheck !== false,
    extents: job.extents,
    sourceEnd: job.awaitSourceEnd === true ? context.sourceEnd : undefined,
    skips: context.skips,
    overlays:
      job.overlayBytes === undefined
        ? undefined
        : context.overlays.complete.then((all) => new Map(job.targets.map((target, i) => [target, all[i] ?? []]))),
    repairs: context.repairs,
    signal: context.signal,
    onProgress: context.progress,
  });
  return { type: 'result', results };
}

/** A clone: the source disk, opened after its checks, written to the targets; none of them may be it. */
async function runClone(job: HelperJobOf<'clone'>, context: JobContext): Promise<FromHelper> {
  const platform = await currentPlatform();
  const [{ SourceDevice }, { flash }, { fileRepairSource }] = await Promise.all([
    import('../writer/source-device.js'),
    import('../writer/flash.js'),
    import('../writer/repair.js'),
  ]);
  let disk: SourceDevice;
  try {
    disk = await SourceDevice.open(job.source, platform, job.sourceMedium ?? null);
  } catch (error) {
    return failedBeforeStart(job, toFailure(error));
  }
  try {
    for (const target of job.targets) {
      const facts = await platform.inspect(target);
      if (facts.exists && facts.rdev === disk.facts.rdev)
        return failedBeforeStart(job, {
          code: 'target-is-source',
          message: `${target} is the drive being copied; choose another drive to write to.`,
        });
    }
    if (context.signal.aborted) return cancelledBeforeStart(job);
    context.started();
    const results = await flash({
      source: disk.fd,
      // A disk is as big as the helper's own look at it says.
      imageSize: disk.facts.size,
      sourceSeekable: false,
      targets: job.targets,
      media: job.media,
      verify: job.verify,
      eject: job.eject === true,
      // Read front to back while writing, but a repair reads the blocks it needs again in place.
      repairs: fileRepairSource(disk.fd, 'The source drive'),
      signal: context.signal,
      onProgress: context.progress,
    });
    return { type: 'result', results: await Promise.all(results.map((r) => explainSourceDisk(disk, r))) };
  } finally {
    await disk.close();
  }
}

/** A backup: the source disk's bytes out through fd 0 (or the image FIFO); nothing is written here. */
async function runBackup(job: HelperJobOf<'backup'>, context: JobContext): Promise<FromHelper> {
  const { SourceDevice, sendDevice } = await import('../writer/source-device.js');
  let disk: SourceDevice;
  try {
    disk = await SourceDevice.open(job.source, await currentPlatform(), job.medium ?? null);
  } catch (error) {
    return failedBeforeStart(job, toFailure(error));
  }
  try {
    if (job.size !== undefined && disk.facts.size !== job.size) {
      const message = `${job.source} is not the drive that was checked: it holds ${disk.facts.size} bytes, not ${job.size} (another card in the same reader?). Nothing was read.`;
      return failedBeforeStart(job, { code: 'source-read-error', message });
    }
    let out: number | Writable;
    try {
      out = await context.endpoints.driveOut();
    } catch (error) {
      return {
        type: 'fatal',
        code: 'protocol-error',
        message: `The helper could not open the way out to the app: ${errorText(error)}`,
      };
    }
    context.started();
    if (job.requested === true) {
      const { sendRanges } = await import('../writer/send-ranges.js');
      return { type: 'result', results: [await sendRanges(disk, out, context.reads, context.signal)] };
    }
    return { type: 'result', results: [await sendDevice(disk, out, context.signal)] };
  } finally {
    await disk.close();
  }
}

/** A verify: the target disk compared with the image on fd 0; nothing is written. */
async function runVerify(job: HelperJobOf<'verify'>, context: JobContext): Promise<FromHelper> {
  const source = await imageSource(context);
  if (typeof source !== 'number') return source;
  context.started();
  const overlay = job.overlayBytes === undefined ? undefined : context.overlays.complete.then((all) => all[0] ?? []);
  const { verifyImage } = await import('../writer/verify-image.js');
  const result = await verifyImage({
    source,
    imageSize: job.imageSize,
    sourceSeekable: job.sourceSeekable === true,
    extents: job.extents,
    skips: context.skips,
    target: job.target,
    medium: job.medium ?? null,
    disksOnly: true,
    overlay,
    signal: context.signal,
    onProgress: context.progress,
  });
  return { type: 'result', results: [result] };
}

/** A check: the target checked for fake capacity, every block it writes put back; fd 0 is not read. */
async function runCheck(job: HelperJobOf<'check'>, context: JobContext): Promise<FromHelper> {
  context.started();
  const { checkFakeCapacity } = await import('../writer/fake-capacity-check.js');
  return {
    type: 'result',
    results: [await checkFakeCapacity({ target: job.target, medium: job.medium ?? null, signal: context.signal })],
  };
}

function runKind(job: HelperJob, context: JobContext): Promise<FromHelper> {
  switch (job.kind) {
    case 'flash':
      return runFlash(job, context);
    case 'clone':
      return runClone(job, context);
    case 'backup':
      return runBackup(job, context);
    case 'verify':
      return runVerify(job, context);
    case 'check':
      return runCheck(job, context);
  }
}

/** The first drive of `job` named other than by its own name (see refuseDriveName), as the failure that refuses the job. */
async function refuseDriveNames(job: HelperJob): Promise<Failure | null> {
  const { writes, reads } = jobDrives(job);
  const platform = await currentPlatform();
  for (const drive of reads === null ? writes : [reads, ...writes]) {
    const refusal = await refuseDriveName(drive, platform);
    if (refusal !== null) return refusal;
  }
  return null;
}

/** Runs `job`; resolves with the message that ends it, a failure of every drive it reports for if anything unforeseen threw. */
export async function runJob(job: HelperJob, context: JobContext): Promise<FromHelper> {
  try {
    const refusal = await refuseDriveNames(job);
    if (refusal !== null) return failedBeforeStart(job, refusal);
    return await runKind(job, context);
  } catch (error) {
    return failedBeforeStart(job, toFailure(error));
  }
}
