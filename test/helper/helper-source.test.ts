/**
 * The helper's own checks on a drive it is asked to read (a clone's or a backup's source), with
 * no CLI in front of it to catch mistakes first.
 */
import { expect, it } from 'vitest';
import { MiB } from '../../worker/common/units.js';
import { startHelper } from '../../worker/helper/launch.js';
import { createOsPipe } from '../../worker/sources/os-pipe.js';
import { closeFd } from '../../worker/engine/io.js';
import { describeDevices } from '../helpers/device-suite.js';
import { assertOwnedLoop, createLoop, digestFile, partitionedLoop } from '../helpers/loop-device.js';
import { builtHelper } from '../helpers/unprivileged.js';

describeDevices('the helper reading a drive', () => {
  it('refuses to clone a drive onto itself, writing nothing', async () => {
    const drive = createLoop({ size: 8 * MiB });
    assertOwnedLoop(drive.path);
    const before = digestFile(drive.backing);
    const job = startHelper({ start: { targets: [drive.path], imageSize: null, sourceSeekable: false, verify: true, sourceDevice: drive.path }, program: builtHelper() });
    expect(await job.result).toEqual([expect.objectContaining({ status: 'failed', target: drive.path, code: 'target-is-source' })]);
    expect(digestFile(drive.backing)).toBe(before);
  });

  it('refuses to back up a partition, and sends nothing', async () => {
    const drive = await partitionedLoop('label: dos\n1M,4M,83\n', 8 * MiB);
    assertOwnedLoop(drive.path);
    const pipe = await createOsPipe();
    const job = startHelper({ source: pipe.writeFd, start: { source: `${drive.path}p1` }, program: builtHelper() });
    await job.ready;
    await closeFd(pipe.writeFd);
    expect(await job.result).toEqual([expect.objectContaining({ status: 'failed', target: `${drive.path}p1`, code: 'target-is-partition' })]);
    await closeFd(pipe.readFd);
  });
});
