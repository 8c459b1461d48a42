/**
 * The app's answers to the helper's repair requests (writer/repair-inbox.ts): the image's bytes
 * at the ranges asked for, read again (user/images/feed/reread.ts), sent in order within the window
 * the helper acknowledges. A request this side cannot or will not answer gets repair-failed with
 * the reason; it is never answered with anything but the image's own bytes.
 */
import {
  MAX_OVERLAY_PIECE,
  MAX_REPAIR_BYTES,
  REPAIR_WINDOW_BYTES,
  type RepairRequestMessage,
  type ToHelper,
} from '../../common/contracts/helper-protocol.js';
import { toFailure, type Failure } from '../../common/domain/failure.js';
import type { ImageReread } from '../images/feed/reread.js';

/** How often the helper hears how far the re-read got: it waits for silence, not for the decode. */
const PROGRESS_EVERY_MS = 1000;

/** Why the helper's `ranges` cannot be a repair's (unsorted, overlapping, too many bytes), or null. */
export function refuseRanges(ranges: RepairRequestMessage['ranges']): string | null {
  let end = 0;
  let total = 0;
  for (const [offset, length] of ranges) {
    if (length <= 0 || offset < end) return `its ranges are not sorted and disjoint at ${offset}+${length}`;
    end = offset + length;
    total += length;
  }
  return total > MAX_REPAIR_BYTES ? `it asks for ${total} bytes, more than the ${MAX_REPAIR_BYTES} a repair may` : null;
}

/** The request being answered. */
interface Current {
  id: number;
  /** Fires when the helper has moved on (a newer request), or the job is over. */
  stop: AbortController;
  /** Bytes sent per message not yet acknowledged, oldest first. */
  unacknowledged: number[];
  /** Who waits for room in the window. */
  room: (() => void) | null;
}

export class RepairAnswers {
  /** How the image is read again; null until the source says (a job with no image to read again). */
  private reread: ImageReread | null = null;
  private current: Current | null = null;
  private stopped = false;

  constructor(private readonly send: (message: ToHelper) => Promise<void>) {}

  /** From now on requests are answered by reading the image again through `reread`. */
  answerWith(reread: ImageReread): void {
    this.reread = reread;
  }

  /** The job is over or cancelled: a re-read under way stops, and no other starts. */
  stop(): void {
    this.stopped = true;
    this.end();
  }

  /**
   * The helper asks one request at a time: a new one means it is done with the one before (it
   * refused its answer, or timed out), whose re-read stops.
   */
  request(message: RepairRequestMessage): void {
    this.end();
    if (this.stopped) return;
    const current: Current = { id: message.id, stop: new AbortController(), unacknowledged: [], room: null };
    this.current = current;
    void this.answer(message, current);
  }

  /** The helper took one message of request `id`. */
  ack(id: number): void {
    const current = this.current;
    if (current === null || current.id !== id) return;
    current.unacknowledged.shift();
    current.room?.();
  }

  private end(): void {
    const current = this.current;
    this.current = null;
    current?.stop.abort();
    current?.room?.();
  }

  private async answer({ id, ranges }: RepairRequestMessage, current: Current): Promise<void> {
    const failed = (failure: Failure) => this.send({ type: 'repair-failed', id, ...failure });
    const refusal = refuseRanges(ranges);
    if (refusal !== null)
      return failed({
        code: 'protocol-error',
        message: `The writing process asked for the image again wrongly: ${refusal}.`,
      });
    const { reread } = this;
    if (reread === null) return failed({ code: 'source-read-error', message: 'The image cannot be read again here.' });
    const signal = current.stop.signal;
    const run = reread(ranges, signal);
    let decoded = 0;
    // On a clock, not on decoded bytes: a download slower than a compressed block a minute
    // decodes nothing for that long, while its source bytes still grow.
    const progress = setInterval(() => {
      if (!signal.aborted)
        void this.send({
          type: 'repair-progress',
          id,
          bytes: decoded,
          ...(run.sourceBytes === undefined ? {} : { source: run.sourceBytes() }),
        });
    }, PROGRESS_EVERY_MS);
    try {
      for await (const piece of run) {
        if (signal.aborted) return;
        if ('decoded' in piece) {
          decoded = piece.decoded;
          continue;
        }
        for (let at = 0; at < piece.bytes.length; at += MAX_OVERLAY_PIECE) {
          const data = piece.bytes.subarray(at, at + MAX_OVERLAY_PIECE);
          await roomFor(current, data.length);
          if (signal.aborted) return;
          current.unacknowledged.push(data.length);
          await this.send({ type: 'repair-data', id, offset: piece.offset + at, data: data.toString('base64') });
        }
      }
    } catch (error) {
      if (!signal.aborted) await failed(toFailure(error));
    } finally {
      clearInterval(progress);
    }
  }
}

/** Waits until `length` more bytes fit the helper's window for `current`, or it is stopped. */
async function roomFor(current: Current, length: number): Promise<void> {
  while (
    !current.stop.signal.aborted &&
    current.unacknowledged.reduce((sum, n) => sum + n, 0) + length > REPAIR_WINDOW_BYTES
  ) {
    await new Promise<void>((resolve) => (current.room = resolve));
  }
  current.room = null;
}
