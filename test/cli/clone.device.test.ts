import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { assertTestTarget, cloneCli, collect, resultsOf, spawnCli, waitForEvent } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import {
  assertOwnedLoop,
  createLoop,
  digestFile,
  partitionedLoop,
  pullLoop,
  readBytes,
} from '../support/loop-device.js';
import { withoutMarkers } from '../support/markers.js';
import { slowSourceDrive } from '../support/throttle.js';

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

describeDevices('sluice clone', () => {
  it('copies the whole source drive, past its partitions too, onto the target, verified, and leaves the rest of a bigger target alone', async () => {
    const source = await partitionedLoop('label: dos\n1M,4M,c\n,6M,83\n', 24 * MiB);
    const target = createLoop({ size: 32 * MiB });
    const beyond = sha256(withoutMarkers(readBytes(target.backing, 24 * MiB, 8 * MiB), 24 * MiB, 32 * MiB, 24 * MiB));
    const run = await cloneCli(source.path, target.path, ['--no-eject']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(resultsOf(run).get(target.path)).toMatchObject({
      status: 'ok',
      written: true,
      verified: true,
      bytes: 24 * MiB,
    });
    expect(sha256(readBytes(target.backing, 0, 24 * MiB))).toBe(sha256(readFileSync(source.backing)));
    expect(sha256(withoutMarkers(readBytes(target.backing, 24 * MiB, 8 * MiB), 24 * MiB, 32 * MiB, 24 * MiB))).toBe(
      beyond,
    );
  });

  it('says the source went away when it is removed mid-clone, and leaves the target’s partition table area blank', async () => {
    const { loop: source, group } = slowSourceDrive();
    const target = createLoop({ size: 64 * MiB });
    try {
      assertOwnedLoop(source.path);
      assertTestTarget(target.path);
      const child = spawnCli(['clone', '--yes', '--json', '--no-eject', source.path, target.path], {
        cgroup: group.dir,
      });
      const done = collect(child);
      await waitForEvent(
        child,
        (e) => e.type === 'progress' && e['phase'] === 'writing' && Number(e['bytesDone']) >= 4 * MiB,
      );
      pullLoop(source);
      const run = await done;
      expect(run.code).toBe(1);
      const result = resultsOf(run).get(target.path);
      expect(result).toMatchObject({ status: 'failed', code: 'source-read-error' });
      expect(result?.message).toMatch(
        new RegExp(`${source.path} stopped answering at byte offset \\d+: was it unplugged\\?`),
      );
      expect(readBytes(target.backing, 0, 1 * MiB).every((b) => b === 0)).toBe(true);
    } finally {
      group.remove();
    }
  });

  it('refuses the source as its own target, and a target smaller than the source, writing nothing', async () => {
    const source = createLoop({ size: 16 * MiB });
    const small = createLoop({ size: 8 * MiB });
    const before = [digestFile(source.backing), digestFile(small.backing)];
    const self = await cloneCli(source.path, source.path);
    expect(self.code).toBe(4);
    expect(resultsOf(self).get(source.path)).toMatchObject({ status: 'failed', code: 'target-is-source' });
    const tooSmall = await cloneCli(source.path, small.path);
    expect(tooSmall.code).toBe(4);
    expect(resultsOf(tooSmall).get(small.path)).toMatchObject({ status: 'failed', code: 'target-too-small' });
    expect([digestFile(source.backing), digestFile(small.backing)]).toEqual(before);
  });
});
