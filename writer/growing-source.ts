/**
 * A batch's one decoded copy of its image, read while the decoder still writes it: a regular file
 * that holds the stream (the image, less what was left out), which the unprivileged side decodes
 * into once for every card (user/images/feed/source-feed.ts). Stream offsets are file offsets, so a
 * card that fell behind the others reads its bytes again where they are. The file's end is no
 * end: only the source-end message says the stream is whole.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { readFully } from '../node/io.js';
import { sourceReadFailure } from './failures.js';
import type { SourceEndSignal } from './source-end.js';

/**
 * How long a read at the file's end waits before it looks again. The decoder writes megabytes
 * ahead of cards that take them at megabytes a second, so this wait is met at the start and where
 * the decoder is the slower side; 10 ms is a thousandth of a second's writing on a fast card.
 */
const POLL_MS = 10;

/**
 * Reads `length` stream bytes at `at` into `into`, waiting where the decoder has not written them
 * yet; fewer only where the stream ended (or failed: the caller reads the verdict).
 */
export async function readGrowing(
  fd: number,
  end: SourceEndSignal,
  into: Buffer,
  length: number,
  at: number,
  signal: AbortSignal | undefined,
): Promise<number> {
  let got = 0;
  try {
    for (;;) {
      // The verdict first: the decoder sends it after its last byte is in the file.
      const verdict = end.current;
      got += await readFully(fd, into, got, length - got, at + got);
      if (got === length || verdict !== null) return got;
      if (signal?.aborted === true) throw new Error('cancelled while the image was being decoded');
      await Promise.race([sleep(POLL_MS), end.settled]);
    }
  } catch (error) {
    throw sourceReadFailure(at + got, error);
  }
}

/** Reads stream bytes the decoder wrote already, again: for a card the others left behind. */
export async function rereadGrown(fd: number, into: Buffer, length: number, at: number): Promise<number> {
  try {
    return await readFully(fd, into, 0, length, at);
  } catch (error) {
    throw sourceReadFailure(at, error);
  }
}
