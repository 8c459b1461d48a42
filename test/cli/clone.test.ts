import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { MiB } from '../../worker/common/units.js';
import { cloneCli, resultsOf } from '../helpers/cli.js';
import { describeDevices } from '../helpers/device-suite.js';
import { createLoop, digestFile, partitionedLoop, readBytes } from '../helpers/loop-device.js';

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

describeDevices('sluice clone', () => {
  it('copies the whole source drive, past its partitions too, onto the target, verified, and leaves the rest of a bigger target alone', async () => {
    const source = await partitionedLoop('label: dos\n1M,4M,c\n,6M,83\n', 24 * MiB);
    const target = createLoop({ size: 32 * MiB });
    const beyond = sha256(readBytes(target.backing, 24 * MiB, 8 * MiB));
    const run = await cloneCli(source.path, target.path, ['--no-eject']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(resultsOf(run).get(target.path)).toMatchObject({ status: 'ok', written: true, verified: true, bytes: 24 * MiB });
    expect(sha256(readBytes(target.backing, 0, 24 * MiB))).toBe(sha256(readFileSync(source.backing)));
    expect(sha256(readBytes(target.backing, 24 * MiB, 8 * MiB))).toBe(beyond);
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
