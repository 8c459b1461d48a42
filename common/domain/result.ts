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

/** Failures during a job: the device is left incomplete. */
const FAILURES_DURING_JOB = [
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
  'helper-died',
  'protocol-error',
  'internal',
] as const;

/**
 * Why a flash did not succeed. Each code has its own sentence and its own screen in the app; the
 * CLI maps them to exit codes. The list is the single source for the type and the IPC schemas.
 */
export const FAILURE_CODES = [...REFUSALS, ...FAILURES_DURING_JOB] as const;

export type FailureCode = (typeof FAILURE_CODES)[number];

export const REFUSAL_CODES: ReadonlySet<FailureCode> = new Set<FailureCode>(REFUSALS);

export interface Failure {
  code: FailureCode;
  /** A sentence a person can act on. */
  message: string;
  /** Byte offset into the image where the problem is, when known. */
  offset?: number | undefined;
  /** For verify-mismatch: how many verification blocks differ. */
  badBlocks?: number | undefined;
}

/**
 * How one target's job ended. Only `ok` may ever be shown as success. `bytes` counts image bytes
 * the job got through on this target: written (a flash) or compared (verify-only); for a failed
 * or cancelled flash, how far writing got before it stopped.
 */
export type TargetResult =
  | {
      status: 'ok';
      target: string;
      bytes: number;
      /** False for a verify-only job, which reads the device and never writes it. */
      written: boolean;
      /** Whether the device was read back and compared; false only when the user turned verification off. */
      verified: boolean;
      /** Wall-clock seconds from opening the device to the end of verification. */
      seconds: number;
      /** The drive was ejected (powered off) afterwards and can be pulled out; absent when ejecting was not asked for. */
      ejected?: boolean | undefined;
      /**
       * What went wrong after the image was safely written and verified: ejecting, or making the
       * OS see the new partitions. Never a reason to call the flash failed.
       */
      warnings?: string[] | undefined;
    }
  | { status: 'cancelled'; target: string; bytes: number }
  | ({ status: 'failed'; target: string; bytes: number } & Failure);

export type TargetStatus = TargetResult['status'];

/** A job succeeded only if every target it was given ended `ok`. */
export function jobSucceeded(results: readonly TargetResult[]): boolean {
  return results.length > 0 && results.every((r) => r.status === 'ok');
}

/**
 * How the unprivileged side that produced the image stream (a decoder, a download) says it ended:
 * every byte sent, or the failure that stopped it (a corrupt archive, a checksum mismatch).
 */
export type SourceEnd =
  /** `bytes` is what the source side sent, or null when a tool wrote to the pipe uncounted. */
  { ok: true; bytes: number | null } | { ok: false; failure: Failure };
