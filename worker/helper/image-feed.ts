import { createReadStream } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** Read size when the app copies an image file into a FIFO or pipe; the FIFO itself holds 64 KiB. */
const IMAGE_COPY_BYTES = 1024 * 1024;

/**
 * Copies the image into `sink` (the image FIFO or named pipe the helper reads) and closes it,
 * which is the helper's end of the image. Only elevation tools that pass no descriptor need this.
 * A helper that stops reading (cancelled, failed, killed) breaks the pipe: the copy just ends, and
 * the job's result says what happened. The caller keeps an image descriptor and closes it itself;
 * reads follow the descriptor's own offset, since a decoder's pipe has no other.
 */
export async function copyImage(source: number | Readable, sink: Writable): Promise<void> {
  const from = typeof source === 'number' ? createReadStream('', { fd: source, autoClose: false, highWaterMark: IMAGE_COPY_BYTES }) : source;
  await pipeline(from, sink).catch(() => sink.destroy());
}
