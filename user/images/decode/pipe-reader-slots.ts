/** What pipe-reader.ts and its thread (pipe-reader-thread.ts) share: the slot states and their messages. */

/** A slot the thread may read into. */
export const FREE = 0;
/** A slot whose bytes the main thread has not finished with. */
export const FULL = 1;

export interface PipeReaderData {
  /** The pipe's read end (closed by the main thread once this one has exited: Node warns when a thread closes another's descriptor). */
  fd: number;
  /** One Int32 per slot: FREE or FULL. */
  states: SharedArrayBuffer;
  /** The slots' bytes, slotBytes each. */
  data: SharedArrayBuffer;
  slotBytes: number;
}

export type PipeReaderMessage =
  { slot: number; bytes: number } | { end: true } | { error: { message: string; code?: string | undefined } };
