/**
 * What every call across the app's IPC boundary resolves with. Handlers never throw across it:
 * Electron strips a thrown error down to its message, and the renderer needs the code to choose
 * what to show.
 */
export const API_ERROR_CODES = [
  /** The arguments did not match the channel's schema. */
  'invalid-request',
  /** The call came from a frame or origin other than the app's own top-level page. */
  'untrusted-sender',
  'image-not-found',
  'image-unreadable',
  /** Flash was asked for before an image was chosen, or for another image than the chosen one. */
  'no-image',
  /** The image file changed on disk between choosing it and flashing it. */
  'image-changed',
  'image-unsupported',
  /** A target is not among the drives the app currently sees. */
  'unknown-drive',
  /** A target carries a verdict that forbids writing to it (too small, read-only, the image's own drive). */
  'drive-blocked',
  /** A flash or a backup is already running. */
  'busy',
  /** A backup was asked for without its file chosen in the save dialog, or for another file or drive. */
  'no-backup-file',
  'not-flashing',
  'link-not-allowed',
  'internal',
] as const;

export type ApiErrorCode = (typeof API_ERROR_CODES)[number];

export interface ApiError {
  code: ApiErrorCode;
  /** A sentence a person can act on. */
  message: string;
}

export type ApiResult<T> = { ok: true; value: T } | { ok: false; error: ApiError };

export function ok<T>(value: T): ApiResult<T> {
  return { ok: true, value };
}

export function fail<T = never>(code: ApiErrorCode, message: string): ApiResult<T> {
  return { ok: false, error: { code, message } };
}
