import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { GiB, KiB, MiB } from '../../common/domain/units.js';
import { describeDevices } from './device-suite.js';
import { FAKE_CLAIMED, FAKE_REAL, fakeCard, removeFakeCard } from './fake-card.js';
import { assertOwnedLoop } from './loop-device.js';
import { hasExited } from './processes.js';

const BLOCK = 4 * KiB;

/** Writes `bytes` at `offset` of `device` with direct I/O, after checking the device is the test's own. */
function writeDirect(device: string, bytes: Buffer, offset: number): void {
  assertOwnedLoop(device);
  execFileSync(
    'dd',
    [`of=${device}`, `bs=${BLOCK}`, `seek=${offset / BLOCK}`, 'oflag=direct', 'conv=notrunc', 'status=none'],
    { input: bytes },
  );
}

function readDirect(device: string, offset: number, length: number): Buffer {
  return execFileSync(
    'dd',
    [`if=${device}`, `bs=${BLOCK}`, `skip=${offset / BLOCK}`, `count=${length / BLOCK}`, 'iflag=direct', 'status=none'],
    { maxBuffer: 2 * length },
  );
}

describeDevices('emulated fake cards (FUSE under a loop device)', () => {
  it('limbo: claims 4 GiB over 256 MiB; past it writes are dropped and reads give zeros', async () => {
    const card = await fakeCard(FAKE_CLAIMED, { kind: 'limbo', real: FAKE_REAL });
    expect(Number(execFileSync('blockdev', ['--getsize64', card.path], { encoding: 'utf8' }))).toBe(FAKE_CLAIMED);
    const low = randomBytes(MiB);
    const high = randomBytes(MiB);
    writeDirect(card.path, low, 100 * MiB);
    writeDirect(card.path, high, 1 * GiB);
    expect(readDirect(card.path, 100 * MiB, MiB).equals(low)).toBe(true);
    expect(readDirect(card.path, 1 * GiB, MiB).equals(Buffer.alloc(MiB))).toBe(true);
  });

  it('wrap-around: an offset past 256 MiB lands at the offset modulo 256 MiB', async () => {
    const card = await fakeCard(FAKE_CLAIMED, { kind: 'wrap', real: FAKE_REAL });
    const bytes = randomBytes(MiB);
    writeDirect(card.path, bytes, 3 * GiB + 44 * MiB);
    expect(readDirect(card.path, 44 * MiB, MiB).equals(bytes)).toBe(true);
    expect(readDirect(card.path, 3 * GiB + 44 * MiB, MiB).equals(bytes)).toBe(true);
  });

  it('bad region: reads and writes inside it fail with an I/O error, outside it work', async () => {
    const card = await fakeCard(512 * MiB, { kind: 'bad', from: 300 * MiB, to: 301 * MiB });
    writeDirect(card.path, randomBytes(MiB), 299 * MiB);
    expect(() => readDirect(card.path, 300 * MiB, BLOCK)).toThrow(/Input\/output error/);
    expect(() => writeDirect(card.path, randomBytes(BLOCK), 300 * MiB + 8 * KiB)).toThrow(/Input\/output error/);
    expect(readDirect(card.path, 301 * MiB, BLOCK).length).toBe(BLOCK);
  });

  it('flaky: one block stored corrupted by its first write only, or by every write', async () => {
    const at = 10 * MiB + 8 * KiB;
    const once = await fakeCard(64 * MiB, { kind: 'flaky', at, always: false });
    const always = await fakeCard(64 * MiB, { kind: 'flaky', at, always: true });
    const bytes = randomBytes(MiB);
    for (const card of [once, always]) {
      writeDirect(card.path, bytes, 10 * MiB);
      const first = readDirect(card.path, 10 * MiB, MiB);
      // Exactly one byte of the flaky block differs.
      expect([...first].filter((b, i) => b !== bytes[i]).length).toBe(1);
      writeDirect(card.path, bytes, 10 * MiB);
    }
    expect(readDirect(once.path, 10 * MiB, MiB).equals(bytes)).toBe(true);
    expect(readDirect(always.path, 10 * MiB, MiB).equals(bytes)).toBe(false);
  });

  it('is owned by the test, and removing it detaches the loop, unmounts FUSE and ends its server', async () => {
    const card = await fakeCard(64 * MiB, { kind: 'honest' });
    assertOwnedLoop(card.path);
    expect(() => assertOwnedLoop('/dev/loop999')).toThrow(/did not create it/);
    const pid = card.server.pid ?? 0;
    await removeFakeCard(card);
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(card.mountpoint);
    expect(hasExited(pid)).toBe(true);
    expect(existsSync(card.mountpoint)).toBe(false);
    expect(() => assertOwnedLoop(card.path)).toThrow();
  });
});
