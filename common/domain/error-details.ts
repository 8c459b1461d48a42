/** What a thrown value says about itself, whatever was thrown. */

/** The code of a Node error (ENOENT, EPIPE, Z_DATA_ERROR, …), or ''. */
export function errorCode(error: unknown): string {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
}

/** An error's message, or the thrown value as text. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
