import { describe, expect, it } from 'vitest';
import {
  MAX_OVERLAY_PIECE,
  MAX_REPAIR_BYTES,
  REPAIR_WINDOW_BYTES,
  type ToHelper,
} from '../../../common/contracts/helper-protocol.js';
import { jobError } from '../../../common/domain/failure.js';
import type { ImageReread } from '../../../user/images/feed/reread.js';
import { RepairAnswers } from '../../../user/launcher/repair-answers.js';

const tick = () => new Promise((r) => setTimeout(r, 5));

function answers(): { answers: RepairAnswers; sent: ToHelper[] } {
  const sent: ToHelper[] = [];
  return { answers: new RepairAnswers(async (message) => void sent.push(message)), sent };
}

/** A re-read of an image whose every byte is its offset modulo 251. */
const patterned: ImageReread = async function* (ranges) {
  for (const [offset, length] of ranges) {
    yield { decoded: offset };
    const bytes = Buffer.alloc(length);
    for (let i = 0; i < length; i++) bytes[i] = (offset + i) % 251;
    yield { offset, bytes };
  }
};

describe("the app's answers to repair requests", () => {
  it('says every second how far the re-read got, source bytes included, while nothing has decoded yet (a slow download)', async () => {
    const { answers: a, sent } = answers();
    let source = 0;
    const slowDownload: ImageReread = (ranges) =>
      Object.assign(
        (async function* () {
          for (let i = 0; i < 22; i++) {
            source += 70_000;
            await new Promise((r) => setTimeout(r, 100));
          }
          const [[offset, length] = [0, 0]] = ranges;
          yield { offset, bytes: Buffer.alloc(length) };
        })(),
        { sourceBytes: () => source },
      );
    a.answerWith(slowDownload);
    a.request({ type: 'repair-request', id: 1, ranges: [[0, 16]] });
    await new Promise((r) => setTimeout(r, 2500));
    const progress = sent.filter((m) => m.type === 'repair-progress');
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.map((m) => (m.type === 'repair-progress' ? m.bytes : -1))).toEqual(progress.map(() => 0));
    const sources = progress.map((m) => (m.type === 'repair-progress' ? (m.source ?? 0) : 0));
    expect(sources[1] ?? 0).toBeGreaterThan(sources[0] ?? 0);
    expect(sent.some((m) => m.type === 'repair-data')).toBe(true);
  });

  it('sends the ranges asked for in pieces that fit a frame, never more than the window ahead of the acknowledgements', async () => {
    const { answers: a, sent } = answers();
    a.answerWith(patterned);
    const length = 2 * REPAIR_WINDOW_BYTES;
    a.request({ type: 'repair-request', id: 1, ranges: [[1000, length]] });
    await tick();
    const data = () => sent.filter((m) => m.type === 'repair-data');
    expect(data()).toHaveLength(REPAIR_WINDOW_BYTES / MAX_OVERLAY_PIECE);
    // Acknowledgements of another request make no room.
    a.ack(7);
    await tick();
    expect(data()).toHaveLength(REPAIR_WINDOW_BYTES / MAX_OVERLAY_PIECE);
    for (let i = 0; i < length / MAX_OVERLAY_PIECE; i++) {
      a.ack(1);
      await Promise.resolve();
    }
    await tick();
    const pieces = data();
    expect(pieces).toHaveLength(length / MAX_OVERLAY_PIECE);
    const bytes = Buffer.concat(
      pieces.map((m) => (m.type === 'repair-data' ? Buffer.from(m.data, 'base64') : Buffer.alloc(0))),
    );
    expect(pieces[0]).toMatchObject({ id: 1, offset: 1000 });
    expect(bytes.length).toBe(length);
    expect(bytes.every((b, i) => b === (1000 + i) % 251)).toBe(true);
  });

  it('refuses requests it must not answer, and passes on why a re-read failed', async () => {
    const { answers: a, sent } = answers();
    a.request({ type: 'repair-request', id: 1, ranges: [[0, 10]] });
    a.answerWith(patterned);
    a.request({
      type: 'repair-request',
      id: 2,
      ranges: [
        [100, 10],
        [50, 10],
      ],
    });
    a.request({
      type: 'repair-request',
      id: 3,
      ranges: [
        [0, MAX_REPAIR_BYTES],
        [MAX_REPAIR_BYTES, 1],
      ],
    });
    a.answerWith(async function* () {
      yield* [];
      throw jobError('source-corrupt', 'The xz data is corrupt at byte 5.');
    });
    a.request({ type: 'repair-request', id: 4, ranges: [[0, 10]] });
    await tick();
    expect(sent).toEqual([
      { type: 'repair-failed', id: 1, code: 'source-read-error', message: 'The image cannot be read again here.' },
      {
        type: 'repair-failed',
        id: 2,
        code: 'protocol-error',
        message:
          'The writing process asked for the image again wrongly: its ranges are not sorted and disjoint at 50+10.',
      },
      {
        type: 'repair-failed',
        id: 3,
        code: 'protocol-error',
        message: `The writing process asked for the image again wrongly: it asks for ${MAX_REPAIR_BYTES + 1} bytes, more than the ${MAX_REPAIR_BYTES} a repair may.`,
      },
      { type: 'repair-failed', id: 4, code: 'source-corrupt', message: 'The xz data is corrupt at byte 5.' },
    ]);
  });

  it('stops a re-read when the helper moves on to another request or the job ends', async () => {
    const { answers: a } = answers();
    const stopped: number[] = [];
    a.answerWith(async function* (ranges, signal) {
      const [[offset] = [0]] = ranges;
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
      stopped.push(offset);
      yield* [];
    });
    a.request({ type: 'repair-request', id: 1, ranges: [[10, 1]] });
    a.request({ type: 'repair-request', id: 2, ranges: [[20, 1]] });
    await tick();
    expect(stopped).toEqual([10]);
    a.stop();
    await tick();
    expect(stopped).toEqual([10, 20]);
  });
});
