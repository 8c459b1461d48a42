import { expect, it } from 'vitest';
import { MiB } from '../../../common/domain/units.js';
import type { TargetResult } from '../../../common/domain/result.js';
import type { LaunchedHelper } from '../../../user/launcher/launch.js';
import { backupDrive } from '../../../user/backup/drive-backup.js';
import { readDrive } from '../../../user/backup/read-drive.js';
import { describeDevices } from '../../support/device-suite.js';
import { createLoop, scratchDir } from '../../support/loop-device.js';

/**
 * A helper that ended without a result, which the launcher never gives (it reports a death as
 * one): the state a lost result message would leave, which nothing real can be made to produce.
 */
function silentHelper(): LaunchedHelper {
  const none = Promise.resolve(null);
  return {
    ready: none,
    driveBytes: none,
    result: Promise.resolve<TargetResult[]>([]),
    cancel: () => undefined,
    endSource: () => undefined,
    skip: () => Promise.resolve(),
    answerRepairs: () => undefined,
    readRanges: () => undefined,
  };
}

describeDevices('a reading helper that ends without a result', () => {
  it('fails the backup, and the read of a few ranges, each saying what it left as it was', async () => {
    const loop = createLoop({ size: 4 * MiB });
    const backup = await backupDrive({
      drive: loop.path,
      file: `${scratchDir()}/never.img`,
      compress: null,
      trimToPartitions: false,
      allBlocks: true,
      verify: true,
      driveSize: 4 * MiB,
      driveMedium: null,
      launch: silentHelper,
    });
    expect(backup).toEqual({
      status: 'failed',
      target: loop.path,
      bytes: 0,
      code: 'helper-died',
      message: 'The reading process ended without a result. Nothing was saved.',
    });
    const read = await readDrive({ drive: loop.path, launch: silentHelper }, () => Promise.resolve('never used'));
    expect(read).toEqual({
      value: null,
      result: {
        status: 'failed',
        target: loop.path,
        bytes: 0,
        code: 'helper-died',
        message: 'The reading process ended without a result. Nothing was read.',
      },
    });
  });
});
