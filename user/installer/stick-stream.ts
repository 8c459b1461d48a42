/**
 * The bytes of an installer stick's written ranges, in order, as the helper's fd 0 carries them
 * for a block-mapped flash: tables and folders from the plan, files read from the ISO as they
 * are reached, a MiB at a time, so memory stays flat whatever the ISO's size.
 */
import { open } from 'node:fs/promises';
import { jobError } from '../../common/domain/failure.js';
import { MiB } from '../../common/domain/units.js';
import type { ReadAt } from '../../node/read-at.js';
import type { StickPiece, StickPlan } from './layout.js';
import type { DiscEntry } from '../iso/volume.js';
import type { MadeFile } from './tree.js';

const PIECE_BYTES = MiB;
const ZEROS = Buffer.alloc(PIECE_BYTES);

function* zeros(length: number): Generator<Buffer> {
  for (let left = length; left > 0; left -= PIECE_BYTES) yield ZEROS.subarray(0, Math.min(PIECE_BYTES, left));
}

/** A file Sluice made, read front to back; it must still hold the bytes it was planned with. */
async function* madeFileBytes(file: MadeFile): AsyncGenerator<Buffer> {
  const handle = await open(file.path, 'r');
  try {
    for (let at = 0; at < file.size; at += PIECE_BYTES) {
      const piece = Buffer.alloc(Math.min(PIECE_BYTES, file.size - at));
      const { bytesRead } = await handle.read(piece, 0, piece.length, at);
      if (bytesRead < piece.length)
        throw jobError(
          'source-read-error',
          `${file.path} (the ${file.name} Sluice made) ended at byte ${at + bytesRead} of ${file.size} while it was written.`,
        );
      yield piece;
    }
  } finally {
    await handle.close();
  }
}

/** The bytes of one of the ISO's files, a MiB at a time. */
export async function* discFileBytes(file: DiscEntry, readAt: ReadAt, image: string): AsyncGenerator<Buffer> {
  if (file.inline !== null) {
    yield file.inline.subarray(0, file.size);
    return;
  }
  for (const [offset, length] of file.extents) {
    for (let at = offset; at < offset + length; at += PIECE_BYTES) {
      const want = Math.min(PIECE_BYTES, offset + length - at);
      const got = await readAt(at, want);
      if (got.length < want)
        throw jobError(
          'source-truncated',
          `${image} is cut short: ${file.name} ends at byte ${at + got.length} of the ISO, before its ${file.size} bytes.`,
        );
      yield got;
    }
  }
}

async function* fileBytes(piece: StickPiece, readAt: ReadAt, image: string): AsyncGenerator<Buffer> {
  const file = piece.file;
  if (file === null) return;
  if ('path' in file) yield* madeFileBytes(file);
  else yield* discFileBytes(file, readAt, image);
}

/** The plan's written bytes, concatenated: what the helper writes at the plan's extents. */
export async function* stickBytes(plan: StickPlan, readAt: ReadAt, image: string): AsyncGenerator<Buffer> {
  const [first, ...rest] = plan.extents;
  const end = first === undefined ? 0 : first[0] + first[1];
  let at = 0;
  for (const piece of plan.pieces) {
    yield* zeros(piece.offset - at);
    at = piece.offset;
    if (piece.bytes !== null) {
      yield Buffer.from(piece.bytes.buffer, piece.bytes.byteOffset, piece.bytes.byteLength);
      at += piece.bytes.byteLength;
    } else if (piece.file !== null) {
      yield* fileBytes(piece, readAt, image);
      at += piece.file.size;
    }
  }
  yield* zeros(end - at);
  for (const [, length] of rest) yield* zeros(length);
}
