/**
 * A stand-in app for launch paths the CLI does not take: runs one helper job as described by the
 * JSON in argv[2] and prints `ready` and `result` as JSON lines. Built to
 * out/test/support/helper-driver.js (tests spawn it, often as the unprivileged test user).
 *
 * `imageThroughFifo` runs sudo the way osascript must be run: image bytes (or, for a backup, the
 * drive's bytes) through a FIFO the app made, rather than on the helper's stdin. sudo is the only
 * elevation tool this machine has that can carry it for real.
 */
import { closeSync, openSync } from 'node:fs';
import { backupDrive, checkBackup } from '../../user/backup/drive-backup.js';
import { sudoLaunch } from '../../user/launcher/elevation/sudo.js';
import { startHelper, type HelperLaunchOptions } from '../../user/launcher/launch.js';
import { builtHelper } from './unprivileged.js';

/** A backup's `size` skips this side's checks, so that only the helper's own can refuse the drive. */
type DriverSpec = { imageThroughFifo: boolean } & ({ image: string; imageSize: number; targets: string[] } | { backup: { drive: string; file: string; size?: number } });

const spec = JSON.parse(process.argv[2] ?? '{}') as DriverSpec;
const launchOptions: Pick<HelperLaunchOptions, 'elevation' | 'program' | 'onProgress'> = {
  elevation: spec.imageThroughFifo ? { ...sudoLaunch, passesStdin: false } : sudoLaunch,
  program: builtHelper(),
  onProgress: (p) => process.stdout.write(`${JSON.stringify({ type: 'progress', ...p })}\n`),
};
const print = (result: object) => process.stdout.write(`${JSON.stringify({ type: 'result', ...result })}\n`);

if ('backup' in spec) {
  const { drive, file, size } = spec.backup;
  const checked = size === undefined ? await checkBackup(drive, file) : { driveSize: size };
  if ('refused' in checked) {
    print(checked.refused);
  } else {
    print(await backupDrive({ drive, file, driveSize: checked.driveSize, compress: null, trimToPartitions: false, verify: true, launch: (options) => startHelper({ ...options, ...launchOptions }) }));
  }
} else {
  const image = openSync(spec.image, 'r');
  const job = startHelper({ source: image, job: { kind: 'flash', targets: spec.targets, imageSize: spec.imageSize, sourceSeekable: true, verify: true }, ...launchOptions });
  process.on('SIGINT', () => job.cancel());
  const pid = await job.ready;
  process.stdout.write(`${JSON.stringify({ type: 'ready', pid })}\n`);
  for (const result of await job.result) print(result);
  closeSync(image);
}
