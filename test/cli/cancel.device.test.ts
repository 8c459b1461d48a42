import { join } from 'node:path';
import { expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { assertTestTarget, collect, spawnCli, waitForEvent } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import { createLoop, readBytes, scratchDir, writeRandomFile } from '../support/loop-device.js';
import { slowCard, throttledGroup } from '../support/throttle.js';

describeDevices('cancelling on a slow card', () => {
  it('Ctrl-C during the write stops within 2 s with exit 130, and the partition table area is left blank', async () => {
    const { image, loop, group } = slowCard();
    try {
      assertTestTarget(loop.path);
      const child = spawnCli(['flash', '--yes', '--json', image, loop.path], { cgroup: group.dir });
      const done = collect(child);
      // Cancel once real writing is under way, well before the end (96 MiB at 20 MB/s takes ~5 s).
      await waitForEvent(
        child,
        (e) => e.type === 'progress' && e['phase'] === 'writing' && Number(e['bytesDone']) > 8 * MiB,
      );
      const cancelledAt = performance.now();
      child.kill('SIGINT');
      const run = await done;
      const seconds = (performance.now() - cancelledAt) / 1000;

      expect(run.code).toBe(130);
      expect(seconds).toBeLessThan(2);
      const result = run.events.find((e) => e.type === 'result');
      expect(result).toMatchObject({ status: 'cancelled', target: loop.path });
      expect(run.stdout).not.toContain('"status":"ok"');
      // The first MiB was blanked and never rewritten, so the half-written disk does not look bootable.
      expect(readBytes(loop.backing, 0, 1 * MiB).every((b) => b === 0)).toBe(true);
    } finally {
      group.remove();
    }
  });

  it('a second Ctrl-C quits at once, and says first that the drive is incomplete', async () => {
    const image = join(scratchDir(), 'image.img');
    writeRandomFile(image, 32 * MiB);
    const loop = createLoop({ size: 64 * MiB });
    // Slower than an SD card: the first cancel waits for a request of several MiB to finish, and
    // at 4 MB/s that takes long enough for the second Ctrl-C to come while it does.
    const group = throttledGroup(loop.path, 4_000_000);
    try {
      assertTestTarget(loop.path);
      const child = spawnCli(['flash', '--yes', '--json', image, loop.path], { cgroup: group.dir });
      const done = collect(child);
      await waitForEvent(
        child,
        (e) => e.type === 'progress' && e['phase'] === 'writing' && Number(e['bytesDone']) > 2 * MiB,
      );
      // Signals of one kind do not queue: the second is sent once the first has been taken.
      const cancelling = new Promise<void>((resolve) =>
        child.stderr?.on('data', (text: Buffer) => text.toString().includes('Cancelling') && resolve()),
      );
      child.kill('SIGINT');
      await cancelling;
      child.kill('SIGINT');
      const run = await done;
      expect(run.code).toBe(130);
      // No result comes after a quit like this: the line before it is all the user is told.
      expect(run.events.filter((e) => e.type === 'result')).toEqual([]);
      expect(run.stderr).toMatch(/Quitting at once\. The drive is incomplete; flash it again before use\.\n$/);
    } finally {
      group.remove();
    }
  });
});
