/**
 * The image's bytes at given ranges, got again for a repair (writer/repair.ts): the helper cannot
 * read a stream again, so this side decodes the image once more from its start (a decoder run,
 * decoded-reader.ts) and keeps only the ranges asked for; everything before and between them is
 * read and dropped. A download is downloaded again.
 */
import type { DecodePlan } from '../../../common/contracts/decoder-protocol.js';
import type { Extent } from '../../../common/domain/extents.js';
import { jobError } from '../../../common/domain/failure.js';
import { decodedReader, type DecodedReader } from '../decode/decoded-reader.js';

/** Bytes of a range, at most this many at a time (each becomes one message, MAX_OVERLAY_PIECE). */
export const REREAD_PIECE = 32 * 1024;
/** Decoded bytes passed over between two reports of how far the decoder got. */
const REPORT_EVERY = 4 * 1024 * 1024;

/** What a re-read yields: the next bytes asked for, at their offset, or how far the decoder got. */
export type RereadPiece = { offset: number; bytes: Buffer } | { decoded: number };

/**
 * Reads `ranges` (sorted, disjoint device offsets) of the image again, in order; stops early when
 * `signal` fires. `sourceBytes`, where given, counts the source bytes read so far, which grow
 * while a slow download has not yet filled a compressed block.
 */
export type ImageReread = (
  ranges: readonly Extent[],
  signal: AbortSignal,
) => AsyncIterable<RereadPiece> & { sourceBytes?(): number };

/** The re-read of the image `plan` decodes. */
export function rereadImage(plan: DecodePlan): ImageReread {
  return (ranges, signal) => {
    // Not saved into the image cache again: the first read did that, and this one stops early.
    // No decoder starts before the first read.
    const reader = decodedReader({ ...plan, tee: null });
    return Object.assign(rereadPieces(reader, ranges, signal), { sourceBytes: () => reader.sourceBytes() });
  };
}

/** The pieces of one re-read through `reader`, which it closes when done. */
async function* rereadPieces(
  reader: DecodedReader,
  ranges: readonly Extent[],
  signal: AbortSignal,
): AsyncGenerator<RereadPiece> {
  // Stopping the decoder ends a read that waits on it.
  const stop = () => void reader.close();
  signal.addEventListener('abort', stop, { once: true });
  try {
    let position = 0;
    for (const [offset, length] of ranges) {
      while (position < offset) {
        position = Math.min(offset, position + REPORT_EVERY);
        await reader.readAt(position, 0);
        if (signal.aborted) return;
        yield { decoded: position };
      }
      for (let at = 0; at < length; at += REREAD_PIECE) {
        const want = Math.min(REREAD_PIECE, length - at);
        const bytes = await reader.readAt(offset + at, want);
        if (signal.aborted) return;
        if (bytes.length < want)
          throw jobError(
            'source-truncated',
            `The image ended at byte ${offset + at + bytes.length} when it was read again for a repair; it was longer when it was written.`,
            { offset: offset + at + bytes.length },
          );
        yield { offset: offset + at, bytes };
      }
      position = offset + length;
    }
  } finally {
    signal.removeEventListener('abort', stop);
    await reader.close();
  }
}
