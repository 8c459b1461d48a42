/**
 * The privileged helper: runs exactly one job (a flash, a clone, a backup or a verify) and exits;
 * or, with --station, arms a flashing station that runs one such job per admitted card, each over
 * the card's own channel, in this one process (armed-station.ts).
 *
 * Command line (node/helper-command-line.ts): how its channel arrives, the app's pid to watch, and
 * the drives the user authorized it to write (the targets) and to read (--source). Through the
 * channel (open-endpoints.ts), which it only ever opens as a client (an inherited socket on fd 3,
 * FIFOs the unprivileged app made, or Windows named pipes the app created; it binds and listens on
 * nothing), it receives one job message and possibly a cancel and the image stream's end, and
 * sends ready, progress, log and result (common/contracts/helper-protocol.ts).
 *
 * Image bytes come from a descriptor: fd 0 (the image file itself, or a pipe from the unprivileged
 * decoder) or an image FIFO when the elevation tool passes no descriptors. The helper opens no
 * image path and never parses an archive as root. The only paths it opens are the drives it was
 * authorized for, after the writer's own fresh checks, and its channel FIFOs, after the checks in
 * fifo-endpoints.ts. What each job does is in run-job.ts.
 */
import { MAX_STATION_HELPERS } from '../common/contracts/station-protocol.js';
import { parseHelperArgv, type HelperArgs } from '../node/helper-command-line.js';
import { exitProcess } from '../node/process-exit.js';
import type { HelperEndpoints } from './endpoints.js';
import { EXIT, serveJob } from './helper-job.js';
import { openHelperEndpoints } from './open-endpoints.js';
import { watchParent } from './parent-watch.js';
import { sizeThreadPool } from './thread-pool.js';
import { errorText } from '../common/domain/error-details.js';

function die(code: number, message: string): never {
  process.stderr.write(`sluice-helper: ${message}\n`);
  exitProcess(code);
}

/** This process's one job: it exits when the job ends. */
function runOwnJob(args: HelperArgs, endpoints: HelperEndpoints): void {
  // A terminal's Ctrl-C reaches the whole process group, and sudo relays it. The parent decides
  // what it means and says so with a cancel message; dying here would leave the device without
  // a clean stop.
  process.on('SIGINT', () => undefined);
  // A cancelled job may have left a read of a stalled source behind (writer/pump.ts): exitProcess ends the process all the same.
  const job = serveJob(args, endpoints, { exit: exitProcess });
  process.on('SIGTERM', job.stop);
  if (args.parentPid !== null) watchParent(args.parentPid, job.stop);
}

async function main(): Promise<void> {
  let args: HelperArgs;
  try {
    args = parseHelperArgv(process.argv.slice(2));
  } catch (error) {
    die(EXIT.badArguments, errorText(error));
  }
  // Before the channel is opened: opening a FIFO is the first call that starts the pool. A
  // station's root side runs the jobs of all its cards at once.
  sizeThreadPool(args.station === undefined ? args.targets.length : MAX_STATION_HELPERS);
  let endpoints: HelperEndpoints;
  try {
    endpoints = await openHelperEndpoints(args.transport);
  } catch (error) {
    die(EXIT.noChannel, `cannot open the channel to the app: ${errorText(error)}`);
  }
  if (args.station === undefined) return runOwnJob(args, endpoints);
  const { runArmedStation } = await import('./armed-station.js');
  await runArmedStation(args, args.station, endpoints);
}

await main();
