/**
 * The shared source of a job with several targets: the stream is read once, into a ring of
 * request-sized slots, and each target copies its next request out of the ring into its own
 * buffer at its own pace. The ring bounds how far the targets may drift apart. When the fastest
 * target needs room that the slowest still holds:
 * - a source that can be read again (the image file, or a decoded copy of it) lets the slowest go:
 *   it reads the rest straight from that copy, and the others never wait for it;
 * - a pipe cannot be read again, so the fastest waits there (the slowest holds the others back by
 *   at most the ring's length).
 *
 * Why a copy per target rather than writing straight from the ring: each target's pump then owns
 * its buffer (two halves, one written while the next is filled, as for a single target), a target
 * that leaves the ring needs no other buffer to read its own copy into, and the copy costs one
 * memcpy on this thread per request (measured: 2 MiB in about 0.2 ms, so 32 cards at 8 MB/s cost
 * under 1% of a core).
 */

/** Reads up to `length` bytes of the stream at stream offset `at` into `into`; fewer only at the end. */
export type StreamRead = (into: Buffer, length: number, at: number) => Promise<number>;

/** One target's view of the stream. */
export interface RingReader {
  /** The stream's bytes at `at` (a slot boundary), at most one slot; 0 at the end. */
  read: StreamRead;
  /** This target takes no more: it no longer holds any slot. */
  release(): void;
}

interface Cursor {
  /** The stream offset this target reads next: it holds no slot before it. */
  at: number;
  /** It fell behind the ring and reads the copy that can be read again. */
  detached: boolean;
}

export class StreamRing {
  private readonly slots: number;
  /** The oldest stream offset the ring still holds for a target. */
  private base: number;
  /** The stream offset after the last byte read into the ring. */
  private end: number;
  private ended = false;
  private failed: { error: unknown } | null = null;
  private filling: Promise<void> | null = null;
  private readonly cursors = new Set<Cursor>();
  /** Fills waiting for room, woken when a target moves on or goes. */
  private waiting: (() => void)[] = [];

  /**
   * @param ring aligned memory, a whole number of `request`-byte slots (at least two)
   * @param from the stream offset of the ring's first byte (the head is read before it)
   * @param fill reads the stream in order into a slot; hashes and checks what it read
   * @param reread reads the stream at any offset again, or null for a pipe
   */
  constructor(
    private readonly ring: Buffer,
    private readonly request: number,
    private readonly from: number,
    private readonly fill: StreamRead,
    private readonly reread: StreamRead | null,
  ) {
    this.slots = Math.floor(ring.length / request);
    if (this.slots < 2 || ring.length % request !== 0)
      throw new Error(`a ring of ${ring.length} bytes does not hold whole ${request}-byte slots`);
    this.base = from;
    this.end = from;
  }

  /** A reader for one target, starting at the ring's first byte. */
  reader(): RingReader {
    const cursor: Cursor = { at: this.from, detached: false };
    this.cursors.add(cursor);
    return {
      read: (into, length, at) => this.read(cursor, into, length, at),
      release: () => {
        this.cursors.delete(cursor);
        this.advanced();
      },
    };
  }

  private async read(cursor: Cursor, into: Buffer, length: number, at: number): Promise<number> {
    if ((at - this.from) % this.request !== 0 || length > this.request)
      throw new Error(`ring read of ${length} bytes at ${at} is not one slot`);
    cursor.at = at;
    if (cursor.detached && this.reread !== null) {
      if (at < this.base) return this.reread(into, length, at);
      // It caught up with the ring: what lies ahead is read through the ring, so that every byte
      // is read (and hashed) once, and a decoded copy is never read past what the decoder wrote.
      cursor.detached = false;
    }
    while (at >= this.end) {
      if (this.failed !== null) throw this.failed.error;
      if (this.ended) return 0;
      await this.fillNext();
    }
    if (this.failed !== null) throw this.failed.error;
    const n = Math.min(length, this.end - at);
    const slot = this.slotOf(at);
    this.ring.copy(into, 0, slot, slot + n);
    // The slot is copied: this target no longer holds it.
    cursor.at = at + n;
    this.advanced();
    return n;
  }

  private slotOf(at: number): number {
    return (((at - this.from) / this.request) % this.slots) * this.request;
  }

  /** Reads the next slot, once room is free; resolves when the ring changed (more bytes, the end, or a failure). */
  private async fillNext(): Promise<void> {
    if (this.filling !== null) return this.filling;
    if (this.end - this.base >= this.ring.length) return this.makeRoom();
    const at = this.end;
    const slot = this.slotOf(at);
    this.filling = this.fill(this.ring.subarray(slot, slot + this.request), this.request, at).then(
      (got) => {
        this.end += got;
        // Only a full slot can have more behind it (readFully is short only at the end).
        if (got < this.request) this.ended = true;
      },
      (error: unknown) => {
        this.failed = { error };
      },
    );
    await this.filling;
    this.filling = null;
  }

  /** The ring is full: lets the slowest target go to the copy that can be read again, or waits for it to move on. */
  private makeRoom(): Promise<void> {
    if (this.reread !== null) {
      for (const cursor of this.cursors) if (cursor.at <= this.base) cursor.detached = true;
      this.advanced();
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Recomputes the oldest offset any target in the ring still needs, and wakes a fill waiting for room. */
  private advanced(): void {
    let base = this.end;
    for (const cursor of this.cursors) if (!cursor.detached) base = Math.min(base, cursor.at);
    this.base = base;
    if (this.end - base >= this.ring.length) return;
    const waiting = this.waiting;
    this.waiting = [];
    for (const wake of waiting) wake();
  }
}
