/**
 * The one read/write loop on its own, with a source and a sink in memory: what it reads and
 * writes, in which order, and how each way of ending leaves it (nothing in flight, the right
 * offset, the write's error before the read's).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { pump, type PumpOp } from '../../writer/pump.js';

const REQUEST = 8;

/** A source of `size` bytes (byte i is i % 251) and a sink, both recording what was asked of them. */
function rig(size: number) {
  const source = Buffer.from(Array.from({ length: size }, (_, i) => i % 251));
  const written = Buffer.alloc(size);
  const log: string[] = [];
  const halves: [Buffer, Buffer] = [Buffer.alloc(REQUEST), Buffer.alloc(REQUEST)];
  const op: PumpOp = {
    halves,
    from: 0,
    length: null,
    read: async (into, length, at) => {
      log.push(`read ${at}+${length}`);
      return source.copy(into, 0, at, Math.min(size, at + length));
    },
    write: async (bytes, at) => {
      log.push(`write ${at}+${bytes.length}`);
      bytes.copy(written, at);
      return true;
    },
  };
  return { source, written, log, op };
}

describe('the pump', () => {
  it('moves a source of unknown length whole, reading each next buffer before it writes the current one', async () => {
    const { source, written, log, op } = rig(21);
    const hashed: string[] = [];
    const end = await pump({ ...op, alongside: (bytes, at) => hashed.push(`${at}+${bytes.length}`) });
    expect(end).toEqual({ end: 'done', at: 21 });
    expect(written.equals(source)).toBe(true);
    expect(log).toEqual(['read 0+8', 'read 8+8', 'write 0+8', 'read 16+8', 'write 8+8', 'write 16+5']);
    expect(hashed).toEqual(['0+8', '8+8', '16+5']);
  });

  it('stops at `length` from `from`, and starts from bytes already read into the first half', async () => {
    const { log, op } = rig(64);
    op.halves[0].fill(7);
    const end = await pump({ ...op, from: 10, length: 12, primed: 8 });
    expect(end).toEqual({ end: 'done', at: 22 });
    expect(log).toEqual(['read 18+4', 'write 10+8', 'write 18+4']);
  });

  it('takes fewer bytes primed than a request as a source that ended, and refuses more than the first read asks', async () => {
    const { log, op } = rig(64);
    expect(await pump({ ...op, length: 12, primed: 0 })).toEqual({ end: 'done', at: 0 });
    expect(await pump({ ...op, length: 12, primed: 5 })).toEqual({ end: 'done', at: 5 });
    expect(log).toEqual(['write 0+5']);
    await expect(pump({ ...op, length: 4, primed: 8 })).rejects.toThrow(RangeError);
    await expect(pump({ ...op, length: 12, primed: -1 })).rejects.toThrow(RangeError);
  });

  it('reads nothing more once admit says the source is bad, and throws its failure with no I/O in flight', async () => {
    const { log, op } = rig(64);
    const bad = new Error('the decoder said the archive is corrupt');
    const admit = (_bytes: Buffer, at: number): boolean => {
      if (at === 8) throw bad;
      return true;
    };
    await expect(pump({ ...op, admit })).rejects.toBe(bad);
    expect(log).toEqual(['read 0+8', 'read 8+8', 'write 0+8']);
  });

  it('stops when admit or write says nobody takes more; `at` leaves out the buffer not taken', async () => {
    const { log, op } = rig(64);
    expect(await pump({ ...op, admit: (_bytes, at) => at < 16 })).toEqual({ end: 'stopped', at: 16 });
    expect(log.at(-1)).toBe('write 8+8');
    const second = rig(64);
    expect(await pump({ ...second.op, write: async (_bytes, at) => at < 16 })).toEqual({ end: 'stopped', at: 16 });
  });

  it('stops at the next buffer once cancelled', async () => {
    const { op } = rig(64);
    const controller = new AbortController();
    expect(await pump({ ...op, advanced: (at) => at === 24 && controller.abort(), signal: controller.signal })).toEqual(
      { end: 'cancelled', at: 24 },
    );
  });

  it('throws the write’s error before the read’s, once both have settled', async () => {
    const { op } = rig(64);
    const order: string[] = [];
    const readError = new Error('read failed');
    const writeError = new Error('write failed');
    const failing = pump({
      ...op,
      read: async (into, length, at) => {
        if (at === 0) return op.read(into, length, at);
        await new Promise((resolve) => setTimeout(resolve, 20));
        order.push('read settled');
        throw readError;
      },
      write: async () => {
        order.push('write failed');
        throw writeError;
      },
    });
    await expect(failing).rejects.toBe(writeError);
    expect(order).toEqual(['write failed', 'read settled']);
  });

  it('a cancel waits for the write in flight, but not for a read that never returns (a source that stalls)', async () => {
    const { log, op } = rig(64);
    const controller = new AbortController();
    const end = pump({
      ...op,
      read: (into, length, at) => (at === 0 ? op.read(into, length, at) : new Promise<number>(() => undefined)),
      write: async (bytes, at) => {
        controller.abort();
        await new Promise((resolve) => setTimeout(resolve, 20));
        log.push(`wrote ${at}+${bytes.length}`);
        return true;
      },
      signal: controller.signal,
    });
    expect(await end).toEqual({ end: 'cancelled', at: 8 });
    expect(log).toEqual(['read 0+8', 'wrote 0+8']);
  });

  it('a cancel ends the wait for the very first read too', async () => {
    const controller = new AbortController();
    const { op } = rig(64);
    const end = pump({ ...op, read: () => new Promise<number>(() => undefined), signal: controller.signal });
    setTimeout(() => controller.abort(), 10);
    expect(await end).toEqual({ end: 'cancelled', at: 0 });
  });

  it('says after each turn which side was waited for: a slow source makes the drive wait, a slow write the source', async () => {
    const turns = async (readMs: number, writeMs: number) => {
      const { op } = rig(40);
      const waits: [number, number][] = [];
      const slowed: PumpOp = {
        ...op,
        read: async (into, length, at) => (await sleep(readMs), op.read(into, length, at)),
        write: async (bytes, at) => (await sleep(writeMs), op.write(bytes, at)),
        waited: (sourceMs, driveMs) => waits.push([sourceMs, driveMs]),
      };
      await pump(slowed);
      return waits;
    };
    // 40 bytes in 8-byte buffers, length unknown: 5 writes, each with a read ahead (the last finds the end).
    const slowSource = await turns(60, 0);
    expect(slowSource).toHaveLength(5);
    for (const [sourceMs, driveMs] of slowSource) {
      expect(sourceMs).toBeGreaterThan(40);
      expect(driveMs).toBe(0);
    }
    const slowDrive = await turns(0, 60);
    expect(slowDrive).toHaveLength(5);
    for (const [sourceMs, driveMs] of slowDrive) {
      expect(sourceMs).toBe(0);
      expect(driveMs).toBeGreaterThan(40);
    }
  });
});
