import type { Extent } from '../common/domain/extents.js';

/** Applies ranges the stream leaves out from now on (StreamLayout.omit); throws to refuse them. */
export type SkipHandler = (extents: readonly Extent[]) => void;

interface Pending {
  extents: readonly Extent[];
  settle(error?: unknown): void;
}

/**
 * Where the unprivileged side's skip messages reach a running job: they may arrive before the job
 * has its layout (while it opens the drives), so they wait here, in order, until it opens the
 * inbox. Each delivery resolves once the job has applied it (the helper then answers skip-ack and
 * the decoder goes on without those bytes) and rejects if the job refused it or no longer reads.
 */
export class SkipInbox {
  /**
   * The first skip the job refused (a protocol error). The helper then stops the job, whose read
   * may be waiting on a decoder that waits for this skip's answer; the job ends failed with this
   * reason, not cancelled.
   */
  refusal: unknown = null;
  private handler: SkipHandler | null = null;
  private closed = false;
  private readonly pending: Pending[] = [];

  deliver(extents: readonly Extent[]): Promise<void> {
    return new Promise((resolve, reject) => {
      const entry: Pending = { extents, settle: (error) => (error === undefined ? resolve() : reject(error as Error)) };
      if (this.handler !== null) this.apply(entry);
      else if (this.closed) entry.settle(new Error('the job no longer reads the image'));
      else this.pending.push(entry);
    });
  }

  /** The job places the stream by `handler` from now on; what waited is applied first. */
  open(handler: SkipHandler): void {
    this.handler = handler;
    for (const entry of this.pending.splice(0)) this.apply(entry);
  }

  /** The job has read its last byte: a skip after that is refused. */
  close(): void {
    this.handler = null;
    this.closed = true;
    for (const entry of this.pending.splice(0)) entry.settle(new Error('the job no longer reads the image'));
  }

  private apply(entry: Pending): void {
    try {
      this.handler?.(entry.extents);
      entry.settle();
    } catch (error) {
      this.refusal ??= error;
      entry.settle(error);
    }
  }
}
