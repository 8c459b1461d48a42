/**
 * A drive's customisation as root sees it: byte ranges the unprivileged side planned from the image
 * (user/customise/plan.ts says why this design), written onto the drive after the image and read
 * back. Root parses nothing here: it takes offsets and bytes, keeps them inside the image it
 * wrote, writes them whole blocks at a time (each block read first, so the bytes around the
 * ranges stay the image's), syncs, and compares what the drive returns with what it was given.
 */
import type { Failure } from '../common/domain/failure.js';
import { toFailure } from '../common/domain/failure.js';
import type { TargetResult } from '../common/domain/result.js';
import { alignDown, alignUp } from './job-memory.js';
import { ABANDONED, unlessAborted } from './pump.js';
import { refusedStop, targetReadFailure, targetWriteFailure } from './failures.js';
import type { WriteTarget } from './write-target.js';

/** Bytes a drive gets at `offset` (a device offset: an image offset, as the image starts at byte 0). */
export interface OverlayPiece {
  offset: number;
  bytes: Buffer;
}

/**
 * More pieces than this for one drive is not a customisation: the planner sends a few dozen ranges
 * in pieces of up to 32 KiB. It also bounds the overlap checks.
 */
const MAX_PIECES = 4096;

/**
 * A job's overlay messages, gathered per target as they arrive, and refused when they step outside
 * what the job announced: more bytes than announced, a target the job lacks, overlapping pieces.
 */
export class OverlayInbox {
  private readonly pieces: OverlayPiece[][];
  private readonly received: number[];
  private resolveComplete!: (pieces: OverlayPiece[][]) => void;
  /** Every announced byte has arrived. */
  readonly complete: Promise<OverlayPiece[][]>;

  constructor(private readonly expected: readonly number[]) {
    this.pieces = expected.map(() => []);
    this.received = expected.map(() => 0);
    this.complete = new Promise((resolve) => (this.resolveComplete = resolve));
    this.settleIfDone();
  }

  /** Takes one piece; returns why it is refused, or null. */
  add(target: number, offset: number, bytes: Buffer): string | null {
    const expected = this.expected[target];
    const pieces = this.pieces[target];
    if (expected === undefined || pieces === undefined)
      return `an overlay for target ${target}, which the job does not have`;
    const received = (this.received[target] ?? 0) + bytes.length;
    if (received > expected) return `more overlay bytes for target ${target} than the ${expected} announced`;
    if (pieces.length >= MAX_PIECES) return `more than ${MAX_PIECES} overlay pieces for target ${target}`;
    if (pieces.some((p) => offset < p.offset + p.bytes.length && p.offset < offset + bytes.length))
      return `overlapping overlay bytes at offset ${offset}`;
    pieces.push({ offset, bytes });
    this.received[target] = received;
    this.settleIfDone();
    return null;
  }

  private settleIfDone(): void {
    if (this.expected.every((bytes, i) => this.received[i] === bytes)) this.resolveComplete(this.pieces);
  }
}

/** The first overlay byte outside [0, imageBytes), or null: a drive's customisation lies inside its image. */
export function outsideImage(pieces: readonly OverlayPiece[], imageBytes: number): number | null {
  const piece = pieces.find((p) => p.offset + p.bytes.length > imageBytes);
  return piece === undefined ? null : piece.offset;
}

/** `pieces` split into parts of at most `most` bytes. */
function* parts(pieces: readonly OverlayPiece[], most: number): Generator<OverlayPiece> {
  for (const piece of pieces) {
    for (let at = 0; at < piece.bytes.length; at += most)
      yield { offset: piece.offset + at, bytes: piece.bytes.subarray(at, at + most) };
  }
}

/** Copies the pieces' bytes over `buffer`, which holds image bytes from offset `at` (a verify's view of the customised image). */
export function applyOverlay(buffer: Buffer, at: number, pieces: readonly OverlayPiece[]): void {
  const end = at + buffer.length;
  for (const piece of pieces) {
    const from = Math.max(at, piece.offset);
    const to = Math.min(end, piece.offset + piece.bytes.length);
    if (to > from) piece.bytes.copy(buffer, from - at, from - piece.offset, to - piece.offset);
  }
}

/**
 * Writes `pieces` onto `target`, in their order, syncs, reads them back with the target's own
 * uncached reads and compares. `region` is an aligned buffer of at least four blocks: its first
 * half holds what is written, its second what is read back. Null when every byte matched.
 */
export async function writeOverlay(
  target: WriteTarget,
  pieces: readonly OverlayPiece[],
  region: Buffer,
): Promise<Failure | null> {
  const block = target.blockSize;
  const half = alignDown(Math.floor(region.length / 2), block);
  const most = half - 2 * block;
  const written = region.subarray(0, half);
  const readBack = region.subarray(half, 2 * half);
  /** The whole blocks around `part`, read into `into`; their length. */
  const readSpan = async (part: OverlayPiece, into: Buffer): Promise<{ start: number; length: number }> => {
    const start = alignDown(part.offset, block);
    const length = alignUp(part.offset + part.bytes.length, block) - start;
    let got: number;
    try {
      got = await target.read(into, 0, length, start);
    } catch (error) {
      throw targetReadFailure(target.path, error, start);
    }
    if (got < length)
      throw targetReadFailure(
        target.path,
        Object.assign(new Error('the drive ended early'), { code: 'EIO' }),
        start + got,
      );
    return { start, length };
  };
  try {
    for (const part of parts(pieces, most)) {
      const { start, length } = await readSpan(part, written);
      part.bytes.copy(written, part.offset - start);
      try {
        await target.write(written, 0, length, start, written);
      } catch (error) {
        throw targetWriteFailure(target.path, error, start, target.capacity, true);
      }
    }
    await target.sync().catch((error: unknown) => {
      throw targetWriteFailure(target.path, error, pieces[0]?.offset ?? 0, target.capacity, true);
    });
    for (const part of parts(pieces, most)) {
      const { start } = await readSpan(part, readBack);
      const back = readBack.subarray(part.offset - start, part.offset - start + part.bytes.length);
      if (!back.equals(part.bytes)) {
        let i = 0;
        while (back[i] === part.bytes[i]) i += 1;
        const offset = part.offset + i;
        return {
          code: 'verify-mismatch',
          message: `Verification of the customisation failed on ${target.path}: the byte at offset ${offset} differs from what was written. The card may be counterfeit or failing; try another card.`,
          offset,
        };
      }
    }
  } catch (error) {
    return toFailure(error);
  }
  return null;
}

/** Per target path, the bytes it gets after the image. */
export type Overlays = ReadonlyMap<string, readonly OverlayPiece[]>;

/**
 * Customises every target whose image was written (and verified) well: each gets its own bytes,
 * written and read back at the same time, each in its own slice of `region` (the job's chunk
 * region, free once verification is done). An ok result says customised; a failure replaces it.
 */
export async function customiseTargets(
  targets: readonly WriteTarget[],
  results: Map<string, TargetResult>,
  overlays: Promise<Overlays>,
  region: Buffer,
  imageBytes: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  const good = targets.filter((t) => results.get(t.path)?.status === 'ok');
  if (good.length === 0) return;
  const all = await unlessAborted(overlays, signal);
  const slice = alignDown(Math.floor(region.length / good.length), 64 * 1024);
  await Promise.all(
    good.map(async (target, i) => {
      const result = results.get(target.path);
      if (result?.status !== 'ok') return;
      if (all === ABANDONED) {
        const refused = refusedStop(signal);
        return void results.set(
          target.path,
          refused === null
            ? { status: 'cancelled', target: target.path, bytes: result.bytes }
            : { status: 'failed', target: target.path, bytes: result.bytes, ...refused },
        );
      }
      const pieces = all.get(target.path) ?? [];
      const outside = outsideImage(pieces, imageBytes);
      const failure =
        outside !== null
          ? {
              code: 'protocol-error' as const,
              message: `The customisation for ${target.path} reaches past the image's ${imageBytes} bytes (from offset ${outside}); it was not written.`,
            }
          : await writeOverlay(target, pieces, region.subarray(i * slice, (i + 1) * slice));
      results.set(
        target.path,
        failure === null
          ? { ...result, customised: true }
          : { status: 'failed', target: target.path, bytes: result.bytes, ...failure },
      );
    }),
  );
}
