/**
 * The verify job as root compares a device with an image and says whether they match: an oracle
 * for the contents of any file it could be tricked into reading. A symbolic link turned from a
 * loop device to a root-only file while the engine looks at it and opens it must never get that
 * file compared (finding 6: before the descriptor was checked, 12 of 60 runs compared the file).
 * Run i turns the link after 2i steps of the job for the first half of the runs, then after
 * steps growing by a tenth per run (to about 10,000), so the turn lands in every gap between the
 * look and the open on a quiet machine and on a loaded one, where the job waits through many more
 * turns of the event loop before it opens the device (in CI, 2i steps all landed before the open).
 * A process turning it as fast as it can was measured to land in that gap in only 1 or 2 of 100
 * runs here.
 */
import { chmodSync, closeSync, openSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { TargetResult } from '../../common/domain/result.js';
import { MiB } from '../../common/domain/units.js';
import { verifyImage } from '../../writer/verify-image.js';
import { describeDevices } from '../support/device-suite.js';
import { pointLink, swapAfterTurns } from '../support/link-racer.js';
import {
  assertOwnedLoop,
  createLoop,
  digestFile,
  readBytes,
  scratchDir,
  writeRandomFile,
} from '../support/loop-device.js';

const RUNS = 100;

describeDevices('verify against a link that is being swapped', () => {
  it(`never compares the root-only file the link is turned to (${RUNS} runs)`, async () => {
    const dir = scratchDir();
    // The secret, and an image that guesses it right: comparing the two would say "ok".
    const secret = join(dir, 'secret');
    writeRandomFile(secret, 1 * MiB);
    chmodSync(secret, 0o600);
    const image = join(dir, 'image.img');
    writeFileSync(image, readBytes(secret, 0, 1 * MiB), { mode: 0o600 });
    const loop = createLoop({ size: 2 * MiB, dir });
    assertOwnedLoop(loop.path);
    const loopBefore = digestFile(loop.backing);
    // An access time before the last change: the first read of the file (relatime) moves it.
    const { mtimeMs } = statSync(secret);
    utimesSync(secret, new Date(mtimeMs - 1e6), new Date(mtimeMs));
    const atimeBefore = statSync(secret).atimeMs;

    const link = join(dir, 'card');
    const outcomes = new Map<string, number>();
    const results: TargetResult[] = [];
    for (let run = 0; run < RUNS; run++) {
      pointLink(link, loop.path);
      const fd = openSync(image, 'r');
      const turns = run < RUNS / 2 ? 2 * run : Math.round(RUNS * 1.1 ** (run - RUNS / 2));
      try {
        const [result] = await Promise.all([
          verifyImage({ source: fd, imageSize: 1 * MiB, target: link, disksOnly: true }),
          swapAfterTurns(link, secret, turns),
        ]);
        results.push(result);
        const outcome = result.status === 'failed' ? result.code : result.status;
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      } finally {
        closeSync(fd);
      }
    }
    console.log(`verify of a swapped link, ${RUNS} runs:`, Object.fromEntries(outcomes));

    // The loop compared (it differs), or the link refused (a file, or swapped between look and
    // open): never a match, which only the secret could give.
    expect(results.filter((r) => r.status !== 'failed')).toEqual([]);
    expect(
      [...outcomes.keys()].every((code) =>
        ['verify-mismatch', 'target-not-block-device', 'target-not-found'].includes(code),
      ),
    ).toBe(true);
    // Every gap was hit: the link turned before the look (a file: refused), between the look and
    // the open (the descriptor is not the device looked at: refused), and after the open (the loop
    // compared).
    expect(outcomes.get('target-not-block-device') ?? 0).toBeGreaterThan(0);
    expect(outcomes.get('target-not-found') ?? 0).toBeGreaterThan(0);
    expect(outcomes.get('verify-mismatch') ?? 0).toBeGreaterThan(0);
    // The secret was never read, and nothing was written anywhere.
    expect(statSync(secret).atimeMs).toBe(atimeBefore);
    expect(digestFile(loop.backing)).toBe(loopBefore);
  });
});
