import { expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { assertTestTarget, collect, spawnCli, waitForEvent } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import { readBytes } from '../support/loop-device.js';
import { slowCard } from '../support/throttle.js';

describeDevices('cancelling on a slow card', () => {
  it('Ctrl-C during the write stops within 2 s with exit 130, and the partition table area is left blank', async () => {
    const { image, loop, group } = slowCard();
    try {
      assertTestTarget(loop.path);
      const child = spawnCli(['flash', '--yes', '--json', image, loop.path], { cgroup: group.dir });
      const done = collect(child);
      // Cancel once real writing is under way, well before the end (96 MiB at 20 MB/s takes ~5 s).
      await waitForEvent(child, (e) => e.type === 'progress' && e['phase'] === 'writing' && Number(e['bytesDone']) > 8 * MiB);
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
});
