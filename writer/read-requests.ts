/**
 * Where a backup of requested ranges gets its instructions: the unprivileged side's read messages,
 * queued in order until the job takes them. Root holds at most MAX_PENDING_READS of them, whatever
 * the other side sends; ranges off the drive are refused when the job takes them.
 */
import type { Extent } from '../common/domain/extents.js';

/** Read messages the helper holds before the job has sent their bytes: 64 of 2000 ranges. */
export const MAX_PENDING_READS = 64;

export class ReadRequests {
  private readonly pending: (readonly Extent[])[] = [];
  private ended = false;
  private wake: (() => void) | null = null;

  /** One read message; a refusal (the queue is full, or something came after the last) or null. */
  deliver(ranges: readonly Extent[], last: boolean): string | null {
    if (this.ended) return 'a read message after the last one';
    if (this.pending.length >= MAX_PENDING_READS) return `more than ${MAX_PENDING_READS} read messages waiting`;
    this.pending.push(ranges);
    this.ended = last;
    this.woken();
    return null;
  }

  /** The next batch of ranges, in order; null once the last was taken, or when `signal` fires. */
  async next(signal: AbortSignal): Promise<readonly Extent[] | null> {
    const woken = (): void => this.woken();
    // One listener for the whole wait: a backup takes thousands of batches from one signal.
    signal.addEventListener('abort', woken, { once: true });
    try {
      while (this.pending.length === 0 && !this.ended && !signal.aborted)
        await new Promise<void>((resolve) => (this.wake = resolve));
    } finally {
      signal.removeEventListener('abort', woken);
    }
    if (signal.aborted) return null;
    return this.pending.shift() ?? null;
  }

  private woken(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}
