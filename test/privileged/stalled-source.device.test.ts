/**
 * A source that stalls: a decoder that stops sending without exiting, so the helper's read of its
 * pipe never returns. The app going away (kill -9), or its cancel, must still stop the helper within
 * 2 s and let go of the drive, whatever the stalled read does. Before reads could be abandoned the
 * helper kept the drive open, exclusively, for as long as the decoder stalled (12 s and more).
 */
import { type ChildProcess } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { assertTestTarget, collect, spawnCommand, waitForEvent } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import { createLoop, digestFile, readBytes, type LoopDevice } from '../support/loop-device.js';
import { hasExited, isHelper, waitForDescendant, waitForExit } from '../support/processes.js';
import { allowSudoForHelper, asTestUser } from '../support/unprivileged.js';

const DRIVER = resolve('out/test/support/helper-driver.js');

/** Sends `bytes` zeros, then holds its pipe open and sends nothing more. */
function stallingDecoder(bytes: number): string[] {
  return ['sh', '-c', `head -c ${bytes} /dev/zero; exec sleep 600`];
}

interface StalledFlash {
  driver: ChildProcess;
  done: ReturnType<typeof collect>;
  helper: number;
  /** The decoder's sleep, which keeps the pipe open: killed by the test when done. */
  decoder: number;
  loop: LoopDevice;
  /** The loop's digest before the flash. */
  before: string;
}

/**
 * A flash of an 8 MiB image whose decoder stalls after `sent` bytes (0: in the first MiB, which the
 * helper reads before anything else; 3 MiB: in the middle of the pump); resolves once the helper
 * waits on it, holding the drive. Started directly by an app that is root, or, through sudo, by an
 * app that is the test user (the helper refuses a FIFO channel that root made).
 */
async function stalledFlash(how: { direct: boolean; sent: number }): Promise<StalledFlash> {
  const loop = createLoop({ size: 16 * MiB });
  assertTestTarget(loop.path);
  const before = digestFile(loop.backing);
  const spec = {
    imageThroughFifo: false,
    direct: how.direct,
    decoder: stallingDecoder(how.sent),
    imageSize: 8 * MiB,
    targets: [loop.path],
  };
  const driver = spawnCommand([...(how.direct ? [] : asTestUser()), process.execPath, DRIVER, JSON.stringify(spec)]);
  const done = collect(driver);
  await eventWithin(driver, (e) => e.type === 'ready');
  const helper = await waitForDescendant(driver.pid ?? 0, isHelper);
  const decoder = await waitForDescendant(driver.pid ?? 0, (argv) => argv[0] === 'sleep');
  // What it sent past the first MiB (the first is kept aside and written last) reaches the device
  // as zeros over the loop's random bytes; then the helper waits in a read that never returns.
  const deadline = performance.now() + 10_000;
  while (!readBytes(loop.backing, 1 * MiB, Math.max(0, how.sent - 1 * MiB)).every((b) => b === 0)) {
    if (performance.now() > deadline) throw new Error('the helper never wrote what the decoder sent');
    await new Promise((r) => setTimeout(r, 20));
  }
  await new Promise((r) => setTimeout(r, 300));
  expect(hasExited(helper)).toBe(false);
  expect(() => openExclusive(loop)).toThrow(/EBUSY/);
  return { driver, done, helper, decoder, loop, before };
}

function openExclusive(loop: LoopDevice): void {
  closeSync(openSync(loop.path, constants.O_RDONLY | constants.O_EXCL));
}

/** The first event of `child` that `predicate` accepts, or a failure after 10 s rather than the test's whole timeout. */
function eventWithin(
  child: ChildProcess,
  predicate: Parameters<typeof waitForEvent>[1],
): ReturnType<typeof waitForEvent> {
  return Promise.race([
    waitForEvent(child, predicate),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no such event within 10 s')), 10_000)),
  ]);
}

describeDevices('a source that stalls', () => {
  let removeSudoRule = (): void => undefined;
  beforeAll(() => {
    removeSudoRule = allowSudoForHelper();
  });
  afterAll(() => removeSudoRule());

  const cases = [
    { direct: true, sent: 3 * MiB, how: 'started directly (its channel a socket), stalled mid-write' },
    { direct: false, sent: 0, how: 'through sudo (FIFOs and the parent watch), stalled before its first byte' },
  ];
  for (const { direct, sent, how } of cases) {
    it(`kill -9 of the app: the helper ${how}, exits within 2 s and lets go of the drive`, async () => {
      const flash = await stalledFlash({ direct, sent });
      try {
        const killed = performance.now();
        flash.driver.kill('SIGKILL');
        await waitForExit(flash.helper, 10_000);
        const ms = performance.now() - killed;
        console.log(`helper ${how} gone ${ms.toFixed(0)} ms after its app was killed`);
        expect(ms).toBeLessThan(2000);
        openExclusive(flash.loop);
        if (sent === 0) {
          // Stopped before it had the first MiB: nothing was written at all.
          expect(digestFile(flash.loop.backing)).toBe(flash.before);
        } else {
          // Stopped mid-job: the partition table area, written last, was blanked first and stays so.
          expect(readBytes(flash.loop.backing, 0, 1 * MiB).every((b) => b === 0)).toBe(true);
        }
      } finally {
        process.kill(flash.decoder, 'SIGKILL');
      }
      // The decoder held the app's stderr too: its output ends only now.
      await flash.done;
    });
  }

  it('a cancel: the helper reports cancelled and exits within 2 s, and the drive is free', async () => {
    const flash = await stalledFlash({ direct: true, sent: 3 * MiB });
    try {
      const cancelled = performance.now();
      flash.driver.kill('SIGINT');
      const result = await eventWithin(flash.driver, (e) => e.type === 'result');
      await waitForExit(flash.helper, 10_000);
      const ms = performance.now() - cancelled;
      console.log(`cancel with a stalled source: helper gone after ${ms.toFixed(0)} ms`);
      expect(ms).toBeLessThan(2000);
      // What it reports: the 3 MiB it wrote, then cancelled (not a failure, not a hang).
      expect(result).toMatchObject({ status: 'cancelled', target: flash.loop.path, bytes: 3 * MiB });
      openExclusive(flash.loop);
    } finally {
      // The app kills its decoder itself once it has the result; a kill that comes too late is no matter.
      if (!hasExited(flash.decoder)) process.kill(flash.decoder, 'SIGKILL');
    }
    expect((await flash.done).code).toBe(0);
  });
});
