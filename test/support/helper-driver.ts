/**
 * A stand-in app for launch paths the CLI does not take: runs one helper job as described by the
 * JSON in argv[2] and prints `ready` and `result` as JSON lines. Built to
 * out/test/support/helper-driver.js (tests spawn it, often as the unprivileged test user).
 *
 * `imageThroughFifo` runs sudo the way osascript must be run: image bytes (or, for a backup, the
 * drive's bytes) through a FIFO the app made, rather than on the helper's stdin. sudo is the only
 * elevation tool this machine has that can carry it for real. `direct` starts the helper as a
 * plain child instead (the driver runs as root). `decoder` is a command whose standard output is
 * the image, in place of an image file: a decoder stand-in the test controls (one that stalls).
 * `appImage` runs the helper the way an app packaged as an AppImage does: pkexec on that file.
 * `packaged` runs it the way the app installed from a deb or rpm does: pkexec on the launcher in
 * that resources directory (test/support/polkit.ts packagedLayout).
 * SIGINT cancels the job.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { createOsPipe } from '../../node/os-pipe.js';
import { backupDrive, checkBackup } from '../../user/backup/drive-backup.js';
import { directLaunch } from '../../user/launcher/elevation/direct.js';
import { pkexecLaunch } from '../../user/launcher/elevation/pkexec.js';
import { sudoLaunch } from '../../user/launcher/elevation/sudo.js';
import { appImageHelperProgram, packagedHelperProgram } from '../../user/launcher/helper-program.js';
import { startHelper, type HelperLaunchOptions } from '../../user/launcher/launch.js';
import { builtHelper } from './unprivileged.js';

/** A backup's `size` skips this side's checks, so that only the helper's own can refuse the drive. */
type DriverSpec = { imageThroughFifo: boolean; direct?: boolean; appImage?: string; packaged?: string } &
  /** `extents`: the only ranges written, as for an image file read in place with its free space left out. */
  (
    | { image: string; imageSize: number; targets: string[]; extents?: [number, number][] }
    | { decoder: string[]; imageSize: number; targets: string[] }
    | { backup: { drive: string; file: string; size?: number } }
  );

const spec = JSON.parse(process.argv[2] ?? '{}') as DriverSpec;
const launchOptions: Pick<HelperLaunchOptions, 'elevation' | 'program' | 'onProgress'> = {
  elevation:
    spec.appImage !== undefined || spec.packaged !== undefined
      ? pkexecLaunch
      : spec.direct === true
        ? directLaunch
        : spec.imageThroughFifo
          ? { ...sudoLaunch, passesStdin: false }
          : sudoLaunch,
  program:
    spec.appImage !== undefined
      ? appImageHelperProgram(spec.appImage, process.getuid?.() ?? -1)
      : spec.packaged !== undefined
        ? packagedHelperProgram(spec.packaged, 'linux')
        : builtHelper(),
  onProgress: (p) => process.stdout.write(`${JSON.stringify({ type: 'progress', ...p })}\n`),
};
const print = (result: object) => process.stdout.write(`${JSON.stringify({ type: 'result', ...result })}\n`);

if ('backup' in spec) {
  const { drive, file, size } = spec.backup;
  const checked = size === undefined ? await checkBackup(drive, file) : { driveSize: size, driveMedium: null };
  if ('refused' in checked) {
    print(checked.refused);
  } else {
    print(
      await backupDrive({
        drive,
        file,
        driveSize: checked.driveSize,
        driveMedium: checked.driveMedium,
        compress: null,
        trimToPartitions: false,
        allBlocks: false,
        verify: true,
        launch: (options) => startHelper({ ...options, ...launchOptions }),
      }),
    );
  }
} else {
  // The decoder writes into a kernel pipe, as the app's decoders do (see node/os-pipe.ts).
  const pipe = 'decoder' in spec ? await createOsPipe() : null;
  const decoder =
    'decoder' in spec && pipe !== null
      ? spawn(spec.decoder[0] ?? '', spec.decoder.slice(1), { stdio: ['ignore', pipe.writeFd, 'inherit'] })
      : null;
  if (pipe !== null) closeSync(pipe.writeFd);
  const image = 'image' in spec ? openSync(spec.image, 'r') : (pipe?.readFd ?? -1);
  const extents = 'extents' in spec && spec.extents !== undefined ? { extents: spec.extents } : {};
  const job = startHelper({
    source: image,
    job: {
      kind: 'flash',
      targets: spec.targets,
      imageSize: spec.imageSize,
      sourceSeekable: decoder === null,
      verify: true,
      ...extents,
    },
    ...launchOptions,
  });
  process.on('SIGINT', () => job.cancel());
  const pid = await job.ready;
  process.stdout.write(`${JSON.stringify({ type: 'ready', pid })}\n`);
  for (const result of await job.result) print(result);
  closeSync(image);
  decoder?.kill();
}
