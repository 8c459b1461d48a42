import type { Failure, FailureCode } from '../common/domain/result.js';
import { formatBytes } from '../common/domain/units.js';
import { PositionedError } from '../node/io.js';
import { errorCode, errorText } from '../common/domain/error-details.js';

/** A failure with its typed description; thrown inside the engine, turned into a result at its edge. */
export class FlashError extends Error {
  readonly failure: Failure;
  constructor(failure: Failure) {
    super(failure.message);
    this.name = 'FlashError';
    this.failure = failure;
  }
}

export function fail(code: FailureCode, message: string, extra: Omit<Failure, 'code' | 'message'> = {}): FlashError {
  return new FlashError({ code, message, ...extra });
}



/** The device offset an I/O error happened at, or `fallback` when the error does not say. */
function offsetOf(error: unknown, fallback: number): number {
  return error instanceof PositionedError ? error.position : fallback;
}

/** What a failed write to the target means, in words; `near` is used when the error has no offset. */
export function targetWriteFailure(target: string, error: unknown, near: number): FlashError {
  if (error instanceof FlashError) return error;
  const offset = offsetOf(error, near);
  const at = `at byte offset ${offset} (${formatBytes(offset)} in)`;
  switch (errorCode(error)) {
    case 'ENOSPC':
      return fail('target-full', `${target} ran out of space ${at}: the device is smaller than the image, or it failed to store more.`, { offset });
    case 'ENODEV':
    case 'ENXIO':
    case 'ENOENT':
    case 'ENOMEDIUM':
      return fail('target-unplugged', `${target} disappeared ${at}: was it unplugged? The device is now incomplete.`, { offset });
    case 'EROFS':
    case 'EPERM':
    case 'EACCES':
      return fail('target-read-only', `${target} refused the write ${at}: it is read-only (check the card's lock switch).`, { offset });
    case 'EIO':
      return fail('write-error', `I/O error writing ${target} ${at}: the card or reader may be failing. The device is now incomplete.`, { offset });
    default:
      return fail('write-error', `Writing ${target} failed ${at}: ${errorText(error)}. The device is now incomplete.`, { offset });
  }
}

/** What a failed read-back of the target means. */
export function targetReadFailure(target: string, error: unknown, near: number): FlashError {
  const offset = offsetOf(error, near);
  const code = errorCode(error);
  if (code === 'ENODEV' || code === 'ENXIO' || code === 'ENOENT' || code === 'ENOMEDIUM') {
    return fail('target-unplugged', `${target} disappeared while being verified, at byte offset ${offset}: was it unplugged?`, { offset });
  }
  return fail('verify-read-error', `Reading ${target} back failed at byte offset ${offset}: ${errorText(error)}. The card may be failing.`, { offset });
}

/** What a failed read of the image at `offset` means. */
export function sourceReadFailure(offset: number, error: unknown): FlashError {
  return fail('source-read-error', `Reading the image failed at byte offset ${offset}: ${errorText(error)}.`, { offset });
}

/** Any error as a Failure; anything that is not a FlashError is a bug, reported as such. */
export function toFailure(error: unknown): Failure {
  if (error instanceof FlashError) return error.failure;
  return { code: 'internal', message: `Internal error: ${errorText(error)}. Please report this.` };
}
