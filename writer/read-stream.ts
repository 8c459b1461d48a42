import { readFully } from '../node/io.js';
import { sourceReadFailure } from './failures.js';
import type { StreamLayout } from './stream-layout.js';

/**
 * Reads the stream's `length` bytes from stream offset `at` into `into`: in order from a pipe, or,
 * from an image file with ranges left out, where the layout puts them in the file (the ranges left
 * out are never read). `again`: the image file is read at `at` whatever was read before (a target
 * that fell behind the others, see stream-ring.ts). Fewer bytes only where the source ends; a
 * failure is the job's.
 */
export async function readStream(
  fd: number,
  seekable: boolean,
  layout: StreamLayout,
  into: Buffer,
  length: number,
  at: number,
  again = false,
): Promise<number> {
  try {
    if (!seekable || (!layout.sparse && !again)) return await readFully(fd, into, 0, length, null);
    let got = 0;
    for (const piece of layout.pieces(at, length)) {
      const n = await readFully(fd, into, piece.bufferOffset, piece.length, piece.deviceOffset);
      got += n;
      if (n < piece.length) break;
    }
    return got;
  } catch (error) {
    throw sourceReadFailure(at, error);
  }
}
