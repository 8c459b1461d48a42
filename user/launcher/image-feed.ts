import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { readAt } from '../../node/io.js';

/** Read size when the app copies an image file into a FIFO or pipe; the FIFO itself holds 64 KiB. */
const IMAGE_COPY_BYTES = 1024 * 1024;

/**
 * Reads a descriptor front to back without ever closing it. fs.createReadStream closes its
 * descriptor when it is destroyed, autoClose or not, and pipeline() destroys it on any error; the
 * caller would then close a number that may already belong to something else.
 */
function descriptorReader(fd: number): Readable {
  return new Readable({
    highWaterMark: IMAGE_COPY_BYTES,
    read() {
      const buffer = Buffer.allocUnsafe(IMAGE_COPY_BYTES);
      readAt(fd, buffer, 0, buffer.length, null).then(
        (n) => this.push(n === 0 ? null : buffer.subarray(0, n)),
        (error: Error) => this.destroy(error),
      );
    },
  });
}

/**
 * Copies the image into `sink` (the image FIFO or named pipe the helper reads) and closes it,
 * which is the helper's end of the image. Only elevation tools that pass no descriptor need this.
 * The caller keeps an image descriptor and closes it itself; reads follow the descriptor's own
 * offset, since a decoder's pipe has no other.
 *
 * Resolves with the error when reading the image failed. The helper then sees only an early end
 * of its input, which for an image of unknown length looks like a complete one, so the caller must
 * fail the job itself. A helper that stops reading (cancelled, failed, killed) only ends the copy:
 * the job's result says what happened.
 */
export async function copyImage(source: number | Readable, sink: Writable): Promise<Error | null> {
  const from = typeof source === 'number' ? descriptorReader(source) : source;
  // pipeline() passes the first error on to both streams, so which side failed is only known from
  // which one reported first.
  let sourceError: Error | null = null;
  let sinkFailed = false;
  from.once('error', (error: Error) => {
    if (!sinkFailed) sourceError ??= error;
  });
  sink.once('error', () => {
    if (sourceError === null) sinkFailed = true;
  });
  await pipeline(from, sink).catch(() => sink.destroy());
  return sourceError;
}
