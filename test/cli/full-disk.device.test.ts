import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { assertTestTarget, collect, flashCli, resultsOf, spawnCli, waitForEvent } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import { assertOwnedLoop, createLoop, scratchDir, smallTmpfs, writeRandomFile } from '../support/loop-device.js';
import { slowCard } from '../support/throttle.js';

describeDevices('a device that fails mid-write', () => {
  it('reports the I/O error with its offset, exits 1, and never claims success', async () => {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    writeRandomFile(image, 48 * MiB);
    // The loop claims 64 MiB but its backing file lives on 12 MiB of tmpfs.
    const loop = createLoop({ size: 64 * MiB, fill: 'sparse', dir: smallTmpfs(12 * MiB) });

    const run = await flashCli(image, [loop.path]);

    expect(run.code).toBe(1);
    const result = resultsOf(run).get(loop.path);
    expect(result).toMatchObject({ status: 'failed', code: 'target-full' });
    expect(result?.offset).toBeGreaterThan(8 * MiB);
    expect(result?.offset).toBeLessThanOrEqual(12 * MiB);
    expect(result?.message).toContain('ran out of space');
    expect(result?.message).toContain(`byte offset ${result?.offset}`);
    expect(result?.message).toMatch(/ The drive is incomplete; flash it again before use\.$/);
    expect(run.events.some((e) => e.type === 'result' && e['status'] === 'ok')).toBe(false);
    expect(run.events.some((e) => e.type === 'progress' && e['phase'] === 'verifying')).toBe(false);
  });

  it('a drive that shrinks to 0 bytes mid-write (a card pulled from its reader) is asked about being unplugged, not just called full', async () => {
    const { image, loop, group } = slowCard();
    try {
      assertTestTarget(loop.path);
      const child = spawnCli(['flash', '--yes', '--json', '--no-eject', image, loop.path], { cgroup: group.dir });
      const done = collect(child);
      await waitForEvent(
        child,
        (e) => e.type === 'progress' && e['phase'] === 'writing' && Number(e['bytesDone']) > 8 * MiB,
      );
      // What a reader shows once its card is out: the same device, now of 0 bytes.
      assertOwnedLoop(loop.path);
      execFileSync('truncate', ['-s', '0', loop.backing]);
      execFileSync('losetup', ['--set-capacity', loop.path]);
      const run = await done;
      expect(run.code).toBe(1);
      const result = resultsOf(run).get(loop.path);
      expect(result, run.stdout + run.stderr).toMatchObject({ status: 'failed', code: 'target-full' });
      expect(result?.message).toMatch(
        /ran out of space at byte offset \d+ \(.*\), short of the 134 MB it announced: was it unplugged, or its card taken out\?/,
      );
      expect(result?.message).toMatch(/ The drive is incomplete; flash it again before use\.$/);
    } finally {
      group.remove();
    }
  });
});
