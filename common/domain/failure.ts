/**
 * Why something Sluice was asked to do did not happen: one list of codes for the helper's results,
 * the decoder's verdict, the app's IPC answers and the CLI. It is translated once, at each edge:
 * into an exit code (cli/exit-codes.ts), into the words on screen (common/app/outcome.ts), or
 * handed to the page as is (common/contracts/api-result.ts).
 */
import * as v from 'valibot';
import { errorText } from './error-details.js';
import { FakeCapacitySchema } from './fake-capacity.js';
import { ByteCount, Message } from './wire.js';

/** Refusals, returned before a single byte reaches the device: the device is untouched. */
const REFUSALS = [
  'target-not-found',
  'target-not-block-device',
  'target-is-partition',
  'target-too-small',
  'target-read-only',
  'target-system',
  'target-is-source',
  'target-mounted',
  'target-busy',
  'target-no-direct-io',
  'permission-denied',
  // Authorization was refused or cancelled: the helper never started.
  'elevation-denied',
] as const;

/** Failures of the image or of a job under way: a device being written is left incomplete. */
const FAILURES_DURING_JOB = [
  'source-not-found',
  'source-corrupt',
  'source-truncated',
  'source-read-error',
  'source-checksum-mismatch',
  'unsupported-format',
  'target-full',
  'target-unplugged',
  'write-error',
  'verify-read-error',
  'verify-mismatch',
  /** The drive holds less than it claims: the capacity check's markers past the image did not come back. */
  'target-fake-capacity',
  'helper-died',
  'protocol-error',
  'internal',
] as const;

/** Requests the app refuses before anything starts: nothing was read or written. */
const REQUEST_REFUSALS = [
  /** The arguments did not match the channel's schema. */
  'invalid-request',
  /** The call came from a frame or origin other than the app's own top-level page. */
  'untrusted-sender',
  /** A flash was asked for before an image was chosen, or for another image than the chosen one. */
  'no-image',
  /** The image file changed on disk between choosing it and flashing it. */
  'image-changed',
  /** A drive is not among the drives the app currently sees. */
  'unknown-drive',
  /** A job is already running. */
  'busy',
  /** A backup was asked for without its file chosen in the save dialog, or for another file or drive. */
  'no-backup-file',
  /** A cancel came when no job was running. */
  'no-job',
  'link-not-allowed',
  /**
   * The image cannot take the customisation asked for: it has no first-boot method Sluice knows,
   * its boot partition has no room for the files, or the settings do not fit its method.
   */
  'cannot-customise',
] as const;

/** The single source for the type and for every schema that carries a code. */
export const FAILURE_CODES = [...REFUSALS, ...FAILURES_DURING_JOB, ...REQUEST_REFUSALS] as const;

export type FailureCode = (typeof FAILURE_CODES)[number];

/** The codes a job's result can carry: what the end screens have words for. */
export type JobFailureCode = (typeof REFUSALS)[number] | (typeof FAILURES_DURING_JOB)[number];

const JOB_FAILURE_CODES: ReadonlySet<FailureCode> = new Set<FailureCode>([...REFUSALS, ...FAILURES_DURING_JOB]);

export function isJobFailureCode(code: FailureCode): code is JobFailureCode {
  return JOB_FAILURE_CODES.has(code);
}

/** Codes after which nothing was written. */
export const REFUSAL_CODES: ReadonlySet<FailureCode> = new Set<FailureCode>([...REFUSALS, ...REQUEST_REFUSALS]);

export const FailureSchema = v.strictObject({
  code: v.picklist(FAILURE_CODES),
  /** A sentence a person can act on. */
  message: Message,
  /** Byte offset into the image where the problem is, when known. */
  offset: v.optional(ByteCount),
  /** For verify-mismatch: how many verification blocks differ. */
  badBlocks: v.optional(ByteCount),
  /** For target-fake-capacity: the kind of fake and the drive's likely real capacity. */
  fakeCapacity: v.optional(FakeCapacitySchema),
});
export type Failure = v.InferOutput<typeof FailureSchema>;

/** A failure, thrown inside a layer and turned into a result or an answer at its edge. */
export class JobError extends Error {
  readonly failure: Failure;
  constructor(failure: Failure) {
    super(failure.message);
    this.name = 'JobError';
    this.failure = failure;
  }
}

/** The JobError for `code`, to throw. */
export function jobError(code: FailureCode, message: string, extra: Omit<Failure, 'code' | 'message'> = {}): JobError {
  return new JobError({ code, message, ...extra });
}

/** The JobError a child process's `failed` reply stands for: its protocol's Failure, tagged with its type. */
export function failedReply({ type: _type, ...failure }: Failure & { type: 'failed' }): JobError {
  return new JobError(failure);
}

/** Any thrown value as a Failure; anything that is not a JobError is a bug, reported as such. */
export function toFailure(error: unknown): Failure {
  if (error instanceof JobError) return error.failure;
  return { code: 'internal', message: `Internal error: ${errorText(error)}. Please report this.` };
}
