/**
 * Where a repair gets the image's bytes again when the helper cannot read them itself (the image
 * came as a stream: decoded, downloaded, passed on by an elevation tool). The helper asks the
 * unprivileged side, which started it and fed it the stream, for device ranges (repair-request);
 * that side decodes the image again from its start and answers with those ranges' bytes only
 * (repair-data), in order, within a window the helper acknowledges message by message. Root
 * parses nothing here: it takes bytes at offsets it asked for, and the repair (repair.ts) writes
 * them only where they match the hashes taken when they were first written.
 */
import {
  MAX_REPAIR_BYTES,
  REPAIR_WINDOW_BYTES,
  type FromHelper,
  type RepairAnswerMessage,
} from '../common/contracts/helper-protocol.js';
import { JobError, jobError } from '../common/domain/failure.js';
import type { Extent } from '../common/domain/extents.js';

/**
 * How long the other side may stay silent while it reads the image again: it reports how far its
 * decoder got every second (repair-progress), so a minute of silence is a side that hung or died.
 */
export const REPAIR_IDLE_MS = 60_000;

/** Where a repair reads the image's bytes again. */
export interface RepairSource {
  /** What the bytes are, in a sentence that says they differ: "The image file", "The image, read again by the app,". */
  readonly what: string;
  /**
   * Hands the image's bytes of `ranges` (device offsets: sorted, disjoint, each written the first
   * time) to `take`, front to back, as consecutive pieces of their concatenation, waiting for each
   * `take` before the next. Resolves 'cancelled' if `signal` fires first; rejects with a JobError
   * when the bytes cannot be had, or with what `take` threw. `decoded` hears how far a source that
   * decodes the image again has got, in image bytes.
   */
  read(
    ranges: readonly Extent[],
    take: (bytes: Buffer) => Promise<void>,
    signal: AbortSignal | undefined,
    decoded?: (bytes: number) => void,
  ): Promise<'done' | 'cancelled'>;
}

/** One request being answered. */
interface Answer {
  id: number;
  ranges: readonly Extent[];
  /** The range the next byte belongs to, and how far into it. */
  range: number;
  into: number;
  /** Bytes received and not yet taken: what the window holds. */
  held: number;
  taking: Promise<void>;
  take(bytes: Buffer): Promise<void>;
  decoded: ((bytes: number) => void) | undefined;
  settle(end: 'done' | 'cancelled' | Error): void;
  touch(): void;
  /** The most decoded bytes a repair-progress message has said so far. */
  decodedSoFar: number;
  /** The most source bytes read a repair-progress message has said so far. */
  sourceSoFar: number;
}

/** The helper's side of repair requests: one at a time, in order (targets repaired at once take turns). */
export class RepairInbox implements RepairSource {
  readonly what = 'The image, read again by the app,';
  private lastId = 0;
  private answer: Answer | null = null;
  private turn: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly send: (message: FromHelper) => void,
    private readonly idleMs = REPAIR_IDLE_MS,
  ) {}

  read(
    ranges: readonly Extent[],
    take: (bytes: Buffer) => Promise<void>,
    signal: AbortSignal | undefined,
    decoded?: (bytes: number) => void,
  ): Promise<'done' | 'cancelled'> {
    const total = ranges.reduce((sum, [, length]) => sum + length, 0);
    if (total > MAX_REPAIR_BYTES)
      return Promise.reject(new Error(`a repair asked for ${total} bytes, more than ${MAX_REPAIR_BYTES}`));
    const mine = this.turn.then(() => this.ask(ranges, take, signal, decoded));
    this.turn = mine.catch(() => undefined);
    return mine;
  }

  private ask(
    ranges: readonly Extent[],
    take: (bytes: Buffer) => Promise<void>,
    signal: AbortSignal | undefined,
    decoded: ((bytes: number) => void) | undefined,
  ): Promise<'done' | 'cancelled'> {
    if (signal?.aborted === true) return Promise.resolve('cancelled');
    if (ranges.length === 0) return Promise.resolve('done');
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = () => answer.settle('cancelled');
      const answer: Answer = {
        id: ++this.lastId,
        ranges,
        range: 0,
        into: 0,
        held: 0,
        taking: Promise.resolve(),
        take,
        decoded,
        decodedSoFar: 0,
        sourceSoFar: 0,
        // The first word counts; it is given once the bytes already taken in are written: the
        // job must not go on (or close the drive) under a write of the repair.
        settle: (end) => {
          if (this.answer !== answer) return;
          this.answer = null;
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          const finish = () => (end instanceof Error ? reject(end) : resolve(end));
          void answer.taking.then(finish, finish);
        },
        // Only the other side's silence counts: while bytes it sent are being written, the wait is the card's.
        touch: () => {
          clearTimeout(timer);
          if (this.answer !== answer) return;
          timer = setTimeout(
            () =>
              answer.held > 0
                ? answer.touch()
                : answer.settle(
                    jobError(
                      'source-read-error',
                      `The app sent nothing for ${this.idleMs / 1000} s while it read the image again for a repair.`,
                    ),
                  ),
            this.idleMs,
          );
        },
      };
      this.answer = answer;
      signal?.addEventListener('abort', onAbort, { once: true });
      answer.touch();
      this.send({
        type: 'repair-request',
        id: answer.id,
        ranges: ranges.map(([offset, length]): [number, number] => [offset, length]),
      });
    });
  }

  /**
   * A message of the other side's answer. Returns a refusal for one that answers no request ever
   * made (the helper then stops the job); one that answers a request already over (cancelled,
   * refused, timed out) is dropped. A wrong answer to the current request fails that request.
   */
  deliver(message: RepairAnswerMessage): string | null {
    if (message.id > this.lastId)
      return `a ${message.type} message for repair request ${message.id}, which was never made`;
    const answer = this.answer;
    if (answer === null || answer.id !== message.id) return null;
    if (message.type === 'repair-progress') {
      // Only progress keeps a request alive: the same counts again are a side that is stuck. A
      // download slower than a compressed block's size a minute still reads more source bytes.
      const source = message.source ?? 0;
      if (message.bytes > answer.decodedSoFar || source > answer.sourceSoFar) {
        answer.decodedSoFar = Math.max(answer.decodedSoFar, message.bytes);
        answer.sourceSoFar = Math.max(answer.sourceSoFar, source);
        answer.touch();
      }
      answer.decoded?.(message.bytes);
      return null;
    }
    answer.touch();
    if (message.type === 'repair-failed') {
      const { type: _type, id: _id, ...failure } = message;
      answer.settle(new JobError(failure));
      return null;
    }
    const bytes = Buffer.from(message.data, 'base64');
    const refusal = this.misplaced(answer, message.offset, bytes.length);
    if (refusal !== null) {
      answer.settle(jobError('protocol-error', `The app answered the repair wrongly: ${refusal}.`));
      return null;
    }
    answer.held += bytes.length;
    answer.into += bytes.length;
    const [, length] = answer.ranges[answer.range] ?? [0, 0];
    if (answer.into === length) {
      answer.range += 1;
      answer.into = 0;
    }
    const last = answer.range === answer.ranges.length;
    answer.taking = answer.taking.then(async () => {
      await answer.take(bytes);
      answer.held -= bytes.length;
      answer.touch();
      this.send({ type: 'repair-ack', id: answer.id });
      if (last) answer.settle('done');
    });
    answer.taking.catch((error: unknown) => answer.settle(error instanceof Error ? error : new Error(String(error))));
    return null;
  }

  /** Why `length` bytes at `offset` cannot be the next of `answer`'s ranges, or null. */
  private misplaced(answer: Answer, offset: number, length: number): string | null {
    const [start, rangeLength] = answer.ranges[answer.range] ?? [0, 0];
    if (answer.range >= answer.ranges.length) return `${length} bytes at ${offset} after all the ranges asked for`;
    if (offset !== start + answer.into) return `bytes at ${offset} where those at ${start + answer.into} were due`;
    if (length > rangeLength - answer.into)
      return `${length} bytes at ${offset}, past the end of the range ${start}+${rangeLength} asked for`;
    if (answer.held + length > REPAIR_WINDOW_BYTES)
      return `more than the ${REPAIR_WINDOW_BYTES} bytes it may send before they are taken`;
    return null;
  }
}
