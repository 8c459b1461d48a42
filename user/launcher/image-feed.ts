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
 * Reads `extents` of an image file, in order, without ever closing it: what a helper that cannot
 * read the file itself gets of an image read in place whose free space is left out.
 */
export function rangesReader(fd: number, extents: readonly (readonly [number, number])[]): Readable {
  let index = 0;
  let done = 0;
  return new Readable({
    highWaterMark: IMAGE_COPY_BYTES,
    read() {
      const extent = extents[index];
      if (extent === undefined) return void this.push(null);
      const [offset, length] = extent;
      const buffer = Buffer.allocUnsafe(Math.min(IMAGE_COPY_BYTES, length - done));
      readAt(fd, buffer, 0, buffer.length, offset + done).then(
        (n) => {
          // A file shorter than its ranges ends the copy; the helper then finds the image cut short.
          if (n === 0) return void this.push(null);
          done += n;
          if (done === length) {
            index += 1;
            done = 0;
          }
          this.push(buffer.subarray(0, n));
        },
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
