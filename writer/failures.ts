import { jobError, JobError, type Failure } from '../common/domain/failure.js';
import { formatBytes } from '../common/domain/units.js';
import { PositionedError } from '../node/io.js';
import { errorCode, errorText } from '../common/domain/error-details.js';

/**
 * Why a job was stopped when the helper refused its instructions rather than being asked to
 * cancel: privileged/main.ts aborts with the JobError that says why (a refused overlay or skip),
 * and the job then ends failed with it, not cancelled. Null for a plain cancel.
 */
export function refusedStop(signal: AbortSignal | undefined): Failure | null {
  return signal?.aborted === true && signal.reason instanceof JobError ? signal.reason.failure : null;
}

/** The device offset an I/O error happened at, or `fallback` when the error does not say. */
function offsetOf(error: unknown, fallback: number): number {
  return error instanceof PositionedError ? error.position : fallback;
}

/**
 * What a failed write to the target means, in words; `near` is used when the error has no offset.
 * `capacity` is what the target said it holds when it was opened (null for a file); `wroteBefore`,
 * whether earlier writes to it succeeded (a drive that turns read-only part-way is not a refusal:
 * it no longer holds what it did).
 */
export function targetWriteFailure(
  target: string,
  error: unknown,
  near: number,
  capacity: number | null,
  wroteBefore: boolean,
): JobError {
  if (error instanceof JobError) return error;
  const offset = offsetOf(error, near);
  const at = `at byte offset ${offset} (${formatBytes(offset)} in)`;
  switch (errorCode(error)) {
    case 'ENOSPC':
      // Short of the size it announced, a drive that takes no more has most often gone: a card
      // pulled from its reader leaves a device of 0 bytes, and every write to it finds no space.
      if (capacity !== null && offset < capacity) {
        return jobError(
          'target-full',
          `${target} ran out of space ${at}, short of the ${formatBytes(capacity)} it announced: was it unplugged, or its card taken out? If not, it holds less than it claims (a counterfeit) or is failing.`,
          { offset },
        );
      }
      return jobError(
        'target-full',
        `${target} ran out of space ${at}: the device is smaller than the image, or it failed to store more.`,
        { offset },
      );
    case 'ENODEV':
    case 'ENXIO':
    case 'ENOENT':
    case 'ENOMEDIUM':
      return jobError('target-unplugged', `${target} disappeared ${at}: was it unplugged?`, { offset });
    case 'EROFS':
    case 'EPERM':
    case 'EACCES':
      if (wroteBefore)
        return jobError(
          'write-error',
          `${target} turned read-only part-way and refused the write ${at} (a worn card locks itself; or its lock switch moved).`,
          { offset },
        );
      return jobError(
        'target-read-only',
        `${target} refused the write ${at}: it is read-only (check the card's lock switch).`,
        { offset },
      );
    case 'EIO':
      return jobError('write-error', `I/O error writing ${target} ${at}: the card or reader may be failing.`, {
        offset,
      });
    default:
      return jobError('write-error', `Writing ${target} failed ${at}: ${errorText(error)}.`, { offset });
  }
}

/** What a failed read-back of the target means. */
export function targetReadFailure(target: string, error: unknown, near: number): JobError {
  const offset = offsetOf(error, near);
  const code = errorCode(error);
  if (code === 'ENODEV' || code === 'ENXIO' || code === 'ENOENT' || code === 'ENOMEDIUM') {
    return jobError(
      'target-unplugged',
      `${target} disappeared while being verified, at byte offset ${offset}: was it unplugged?`,
      { offset },
    );
  }
  return jobError(
    'verify-read-error',
    `Reading ${target} back failed at byte offset ${offset}: ${errorText(error)}. The card may be failing.`,
    { offset },
  );
}

/** What a failed read of the image at `offset` means. */
export function sourceReadFailure(offset: number, error: unknown): JobError {
  return jobError('source-read-error', `Reading the image failed at byte offset ${offset}: ${errorText(error)}.`, {
    offset,
  });
}
