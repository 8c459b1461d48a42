/**
 * How the free-space readers get at an image's bytes. They ask for one range at a time, in any
 * order; a file (or a stored zip entry) answers every question, while a stream (an .xz being
 * decoded) can answer only questions about bytes that have not gone past yet. Writing the readers
 * against this one question lets the same code serve both: what a stream has already passed is
 * simply not known, and what is not known is written.
 */
import type { ReadAt } from '../../../node/read-at.js';

/**
 * `length` bytes of the image at `offset` (fewer only where the image ends), or null when they
 * cannot be had: a stream has already gone past them.
 */
export type ReadImage = (offset: number, length: number) => Promise<Buffer | null>;

/** The largest question a reader may ask: it is held in memory until a stream brings all of it. */
export const MAX_READ_BYTES = 1024 * 1024;

/** Random access: every question answered by reading the file. */
export function randomAccess(readAt: ReadAt): ReadImage {
  return async (offset, length) => readAt(offset, Math.min(length, MAX_READ_BYTES));
}

interface Question {
  offset: number;
  bytes: Buffer;
  filled: number;
  answer(bytes: Buffer | null): void;
}

/**
 * The image as it streams past: `feed` each chunk in order, and await it before sending the chunk
 * on. A question about bytes still ahead waits until they pass; one about bytes already gone is
 * answered null at once. `feed` returns only once the readers have done all they could with the
 * chunk (asked their next question beyond it, or finished), so whatever they learned from it is
 * known before any of it leaves.
 */
export class StreamedImage {
  /** Image offset of the next byte to be fed. */
  private position = 0;
  private question: Question | null = null;
  private finished = false;
  /** Resolved when the readers ask their next question or finish. */
  private settle: (() => void) | null = null;

  readonly read: ReadImage = (offset, length) => {
    if (offset < this.position || this.finished) return Promise.resolve(null);
    return new Promise((resolve) => {
      this.question = { offset, bytes: Buffer.alloc(Math.min(length, MAX_READ_BYTES)), filled: 0, answer: resolve };
      this.settled();
    });
  };

  /** The readers have finished: nothing more will be asked. */
  done(): void {
    this.finished = true;
    this.settled();
  }

  /** True once the readers have finished. */
  get idle(): boolean {
    return this.finished;
  }

  /** Hands the readers image bytes [position, position + chunk.length); resolves when they have done with them. */
  async feed(chunk: Buffer, position: number): Promise<void> {
    const end = position + chunk.length;
    for (let q = this.question; q !== null && q.offset + q.filled < end; q = this.question) {
      const from = Math.max(q.offset + q.filled, position);
      const copied = chunk.copy(
        q.bytes,
        from - q.offset,
        from - position,
        Math.min(end, q.offset + q.bytes.length) - position,
      );
      q.filled = from - q.offset + copied;
      if (q.filled < q.bytes.length) break;
      this.question = null;
      const next = this.nextStep();
      q.answer(q.bytes);
      await next;
    }
    this.position = end;
  }

  /** The stream ended at `size`: a question still open gets what there was of it. */
  end(): void {
    const q = this.question;
    this.question = null;
    this.finished = true;
    q?.answer(q.filled > 0 ? q.bytes.subarray(0, q.filled) : null);
  }

  private nextStep(): Promise<void> {
    if (this.finished) return Promise.resolve();
    return new Promise((resolve) => (this.settle = resolve));
  }

  private settled(): void {
    const settle = this.settle;
    this.settle = null;
    settle?.();
  }
}
