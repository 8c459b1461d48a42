import { describe, expect, it } from 'vitest';
import { REPAIR_WINDOW_BYTES, type FromHelper } from '../../common/contracts/helper-protocol.js';
import { JobError } from '../../common/domain/failure.js';
import { RepairInbox } from '../../writer/repair-inbox.js';

function inbox(idleMs = 60_000): { inbox: RepairInbox; sent: FromHelper[] } {
  const sent: FromHelper[] = [];
  return { inbox: new RepairInbox((message) => void sent.push(message), idleMs), sent };
}

const data = (id: number, offset: number, bytes: Buffer) => ({
  type: 'repair-data' as const,
  id,
  offset,
  data: bytes.toString('base64'),
});

/** What a rejected read failed with. */
async function failure(read: Promise<unknown>): Promise<string> {
  const error = await read.then(
    () => null,
    (e: unknown) => e,
  );
  return error instanceof JobError ? `${error.failure.code}: ${error.failure.message}` : String(error);
}

describe('the helper side of repair requests', () => {
  it('asks for the ranges, takes the answer in order, acknowledges each message, and ends when all arrived', async () => {
    const { inbox: box, sent } = inbox();
    const taken: Buffer[] = [];
    const read = box.read(
      [
        [4096, 8],
        [65536, 4],
      ],
      async (bytes) => void taken.push(Buffer.from(bytes)),
      undefined,
    );
    await Promise.resolve();
    expect(sent).toEqual([
      {
        type: 'repair-request',
        id: 1,
        ranges: [
          [4096, 8],
          [65536, 4],
        ],
      },
    ]);
    expect(box.deliver(data(1, 4096, Buffer.from('abcd')))).toBeNull();
    expect(box.deliver(data(1, 4100, Buffer.from('efgh')))).toBeNull();
    expect(box.deliver(data(1, 65536, Buffer.from('ijkl')))).toBeNull();
    await expect(read).resolves.toBe('done');
    expect(Buffer.concat(taken).toString()).toBe('abcdefghijkl');
    expect(sent.filter((m) => m.type === 'repair-ack')).toHaveLength(3);
  });

  it('refuses bytes out of order, past a range, or beyond the window', async () => {
    const cases: [string, (box: RepairInbox) => void, string][] = [
      [
        'out of order',
        (box) => box.deliver(data(1, 8192, Buffer.alloc(4))),
        'bytes at 8192 where those at 4096 were due',
      ],
      [
        'past its range',
        (box) => box.deliver(data(1, 4096, Buffer.alloc(16))),
        '16 bytes at 4096, past the end of the range 4096+8 asked for',
      ],
    ];
    for (const [, act, words] of cases) {
      const { inbox: box } = inbox();
      const read = box.read([[4096, 8]], async () => undefined, undefined);
      await Promise.resolve();
      act(box);
      expect(await failure(read)).toBe(`protocol-error: The app answered the repair wrongly: ${words}.`);
    }
    // Bytes not yet taken (the card is slow) fill the window: the side that sends more than it may is refused.
    const { inbox: box } = inbox();
    const piece = 24 * 1024;
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const read = box.read([[0, 4 * REPAIR_WINDOW_BYTES]], () => gate, undefined);
    await Promise.resolve();
    let at = 0;
    while (at + piece <= REPAIR_WINDOW_BYTES) {
      box.deliver(data(1, at, Buffer.alloc(piece)));
      at += piece;
    }
    box.deliver(data(1, at, Buffer.alloc(piece)));
    // The refusal is given once what was taken in is written.
    let settled = false;
    void read.catch(() => (settled = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(settled).toBe(false);
    open();
    expect(await failure(read)).toBe(
      `protocol-error: The app answered the repair wrongly: more than the ${REPAIR_WINDOW_BYTES} bytes it may send before they are taken.`,
    );
  });

  it('refuses an answer to a request never made, and drops one to a request that is over', async () => {
    const { inbox: box } = inbox();
    expect(box.deliver(data(1, 0, Buffer.alloc(4)))).toBe(
      'a repair-data message for repair request 1, which was never made',
    );
    const controller = new AbortController();
    const read = box.read([[0, 8]], async () => undefined, controller.signal);
    await Promise.resolve();
    controller.abort();
    await expect(read).resolves.toBe('cancelled');
    expect(box.deliver(data(1, 0, Buffer.alloc(4)))).toBeNull();
  });

  it("passes on the other side's failure, and gives up on a side that stays silent, though not on one that reports progress", async () => {
    const failed = inbox();
    const read = failed.inbox.read([[0, 8]], async () => undefined, undefined);
    await Promise.resolve();
    failed.inbox.deliver({ type: 'repair-failed', id: 1, code: 'source-corrupt', message: 'The xz data is corrupt.' });
    expect(await failure(read)).toBe('source-corrupt: The xz data is corrupt.');

    const quiet = inbox(200);
    const decoded: number[] = [];
    const waiting = quiet.inbox.read(
      [[0, 8]],
      async () => undefined,
      undefined,
      (bytes) => decoded.push(bytes),
    );
    await Promise.resolve();
    for (let i = 1; i <= 3; i++) {
      await new Promise((r) => setTimeout(r, 120));
      quiet.inbox.deliver({ type: 'repair-progress', id: 1, bytes: i * 1000 });
    }
    expect(decoded).toEqual([1000, 2000, 3000]);
    expect(await failure(waiting)).toBe(
      'source-read-error: The app sent nothing for 0.2 s while it read the image again for a repair.',
    );

    // The same count again and again is a side that is stuck, not progress.
    const stuck = inbox(200);
    const repeating = stuck.inbox.read([[0, 8]], async () => undefined, undefined);
    await Promise.resolve();
    for (let i = 1; i <= 3; i++) {
      await new Promise((r) => setTimeout(r, 120));
      stuck.inbox.deliver({ type: 'repair-progress', id: 1, bytes: 1000 });
    }
    expect(await failure(repeating)).toBe(
      'source-read-error: The app sent nothing for 0.2 s while it read the image again for a repair.',
    );

    // A download slower than a compressed block per limit decodes nothing for that long, but its source bytes grow: alive.
    const downloading = inbox(200);
    const reading = downloading.inbox.read([[0, 8]], async () => undefined, undefined);
    await Promise.resolve();
    for (let i = 1; i <= 4; i++) {
      await new Promise((r) => setTimeout(r, 120));
      downloading.inbox.deliver({ type: 'repair-progress', id: 1, bytes: 0, source: i * 70_000 });
    }
    downloading.inbox.deliver(data(1, 0, Buffer.alloc(8)));
    await expect(reading).resolves.toBe('done');

    // A card slower than the limit to take what was sent is not the other side's silence.
    const slow = inbox(100);
    const taking = slow.inbox.read([[0, 8]], () => new Promise((r) => setTimeout(r, 350)), undefined);
    await Promise.resolve();
    slow.inbox.deliver(data(1, 0, Buffer.alloc(8)));
    await expect(taking).resolves.toBe('done');
  });

  it('answers the requests of targets repaired at once one after the other', async () => {
    const { inbox: box, sent } = inbox();
    const first = box.read([[0, 4]], async () => undefined, undefined);
    const second = box.read([[8192, 4]], async () => undefined, undefined);
    await new Promise((r) => setTimeout(r, 10));
    expect(sent.filter((m) => m.type === 'repair-request')).toHaveLength(1);
    box.deliver(data(1, 0, Buffer.alloc(4)));
    await expect(first).resolves.toBe('done');
    await new Promise((r) => setTimeout(r, 10));
    expect(sent.filter((m) => m.type === 'repair-request').at(-1)).toEqual({
      type: 'repair-request',
      id: 2,
      ranges: [[8192, 4]],
    });
    box.deliver(data(2, 8192, Buffer.alloc(4)));
    await expect(second).resolves.toBe('done');
  });
});
