/**
 * What every call across the app's IPC boundary resolves with. Handlers never throw across it:
 * Electron strips a thrown error down to its message, and the renderer needs the code to choose
 * what to show. The code is one of Sluice's failure codes (common/domain/failure.ts), as the
 * helper, the decoder and the CLI use them: a refusal names exactly what refused.
 */
import type { Failure, FailureCode } from '../domain/failure.js';

export type ApiResult<T> = { ok: true; value: T } | { ok: false; error: Failure };

export function ok<T>(value: T): ApiResult<T> {
  return { ok: true, value };
}

/** The answer for a request that was not carried out, and why. */
export function refuse<T = never>(code: FailureCode, message: string): ApiResult<T> {
  return { ok: false, error: { code, message } };
}

/** The answer for a request that a failure stopped (a refusal or an error of the layer below), as it is. */
export function refused<T = never>(failure: Failure): ApiResult<T> {
  return { ok: false, error: failure };
}
