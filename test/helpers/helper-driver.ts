/**
 * A stand-in app for launch paths the CLI does not take: runs one helper job as described by the
 * JSON in argv[2] and prints `ready` and `result` as JSON lines. Built to
 * out/test/helpers/helper-driver.js (tests spawn it, often as the unprivileged test user).
 *
 * `imageThroughFifo` runs sudo the way osascript must be run: image bytes through a FIFO the
 * app made, rather than on the helper's stdin. sudo is the only elevation tool this machine has
 * that can carry it for real.
 */
import { closeSync, openSync } from 'node:fs';
import { sudoLaunch } from '../../worker/helper/elevation/sudo.js';
import { startHelper } from '../../worker/helper/launch.js';
import { builtHelper } from './unprivileged.js';

interface DriverSpec {
  image: string;
  imageSize: number;
  targets: string[];
  imageThroughFifo: boolean;
}

const spec = JSON.parse(process.argv[2] ?? '{}') as DriverSpec;
const image = openSync(spec.image, 'r');
const job = startHelper({
  source: image,
  start: { targets: spec.targets, imageSize: spec.imageSize, sourceSeekable: true, verify: true },
  elevation: spec.imageThroughFifo ? { ...sudoLaunch, passesStdin: false } : sudoLaunch,
  program: builtHelper(),
  onProgress: (p) => process.stdout.write(`${JSON.stringify({ type: 'progress', ...p })}\n`),
});
process.on('SIGINT', () => job.cancel());
const pid = await job.ready;
process.stdout.write(`${JSON.stringify({ type: 'ready', pid })}\n`);
for (const result of await job.result) process.stdout.write(`${JSON.stringify({ type: 'result', ...result })}\n`);
closeSync(image);
