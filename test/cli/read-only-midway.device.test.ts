/**
 * A card that turns read-only part-way through a write (worn cards lock themselves; a lock switch
 * can move) is a failure that leaves the drive incomplete, not a refusal that left it untouched:
 * the result says so, exits 1 (not 4, "refused"), and its code is not the lock switch's refusal.
 */
import { execFileSync } from 'node:child_process';
import { expect, it } from 'vitest';
import { DRIVE_INCOMPLETE } from '../../common/domain/result.js';
import { MiB } from '../../common/domain/units.js';
import { assertTestTarget, collect, spawnCli, waitForEvent } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import { slowCard } from '../support/throttle.js';

describeDevices('a drive that turns read-only part-way', () => {
  it('fails as a write error past the first bytes, saying the drive is incomplete; read-only from the start stays a refusal', async () => {
    const { image, loop, group } = slowCard();
    try {
      assertTestTarget(loop.path);
      const child = spawnCli(['flash', '--yes', '--json', image, loop.path], { cgroup: group.dir });
      const done = collect(child);
      await waitForEvent(
        child,
        (e) => e.type === 'progress' && e['phase'] === 'writing' && Number(e['bytesDone']) > 8 * MiB,
      );
      execFileSync('blockdev', ['--setro', loop.path]);
      const run = await done;
      const result = run.events.find((e) => e.type === 'result');
      expect(run.code).toBe(1);
      expect(result).toMatchObject({ status: 'failed', code: 'write-error', target: loop.path });
      expect(String(result?.['message'])).toMatch(/turned read-only part-way/);
      expect(String(result?.['message'])).toContain(DRIVE_INCOMPLETE);
      expect(Number(result?.['offset'])).toBeGreaterThan(8 * MiB);

      // Read-only before the first byte: refused as such, exit 4, nothing said about its state (nothing changed).
      const refused = await collect(spawnCli(['flash', '--yes', '--json', image, loop.path]));
      const refusal = refused.events.find((e) => e.type === 'result');
      expect(refused.code).toBe(4);
      expect(refusal).toMatchObject({ status: 'failed', code: 'target-read-only' });
      expect(String(refusal?.['message'])).not.toContain(DRIVE_INCOMPLETE);
    } finally {
      execFileSync('blockdev', ['--setrw', loop.path]);
      group.remove();
    }
  });
});
