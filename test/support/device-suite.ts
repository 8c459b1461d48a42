import { afterAll, describe } from 'vitest';
import { removeFakeCards } from './fake-card.js';
import { cleanupLoops, isRoot } from './loop-device.js';

/**
 * A describe() for tests that need real block devices. They need root; without it they skip,
 * except under CI, where skipping them would hide exactly the tests that matter (see
 * test/setup/require-root.ts, which fails the run first).
 */
export function describeDevices(name: string, body: () => void): void {
  describe.skipIf(!isRoot)(name, () => {
    afterAll(async () => {
      // A fake card's loop is detached and its FUSE filesystem unmounted before the scratch space goes.
      await removeFakeCards();
      cleanupLoops();
    });
    body();
  });
}
