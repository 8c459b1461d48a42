/**
 * One authorization for a whole batch: an armed station's root side (privileged/armed-station.ts)
 * is started once, through the front end's elevation (pkexec, sudo, the broker of `sudo sluice`),
 * and each card's job is then run by it (in its one process) rather than after a password prompt of its own. Root
 * holds every card to the station's rules itself, so a station whose unprivileged side went wrong
 * still cannot write a disk that was there at arming, an internal disk, or one outside the range
 * or the slots.
 *
 * Linux only: "arrived after arming" is the kernel's disk sequence number, which other systems
 * lack; there each card's helper still asks on its own.
 */
import { spawn } from 'node:child_process';
import { errorText } from '../../common/domain/error-details.js';
import { jobError } from '../../common/domain/failure.js';
import { FromStation, type ToStation } from '../../common/contracts/station-protocol.js';
import { formatBytes } from '../../common/domain/units.js';
import { Channel } from '../../node/channel.js';
import { helperArgv, type StationLimits } from '../../node/helper-command-line.js';
import { directLaunch } from './elevation/direct.js';
import { RelayedProcess } from './elevation/relayed-process.js';
import { lastLine, type Elevation, type LaunchedProcess, type LaunchExit } from './elevation/types.js';
import { builtHelperProgram, type HelperProgram } from './helper-program.js';
import { startHelper, type HelperLaunchOptions, type LaunchedHelper } from './launch.js';
import { createTransport, type LaunchTransport } from './transport.js';

export interface ArmOptions {
  limits: StationLimits;
  /** How root is asked for, once (elevation/choose.ts). */
  elevation: Elevation;
  program?: HelperProgram | undefined;
  interactive?: boolean | undefined;
  /** The station's own stderr lines (and the elevation tool's). */
  onLog?: ((message: string) => void) | undefined;
}

export interface ArmedStation {
  /** Starts one card's helper through the station's root side (startHelper, without a prompt of its own). */
  launch(options: HelperLaunchOptions): LaunchedHelper;
  /** Disarms: root stops the cards' helpers still running and exits. */
  stop(): Promise<void>;
}

/** How long stopping waits for root's side to exit after its cards' helpers. */
const STOP_WAIT_MS = 30_000;

/**
 * Whether a station started through `elevation` arms a root side once: on Linux, wherever a card's
 * helper would otherwise need an elevation tool (or the broker) of its own, for an image each card
 * reads as a file (`direct`: raw, or the batch's decoded copy). A card's image reaches a helper that
 * root started through the channel's image FIFO; a decoder's stream per card is not armed (no
 * test covers it through the station's root side), so such an image keeps a prompt per card.
 */
export function armsOnce(
  elevation: Elevation,
  image: { direct: boolean },
  platform: NodeJS.Platform = process.platform,
): boolean {
  return platform === 'linux' && image.direct && elevation !== directLaunch && elevation.channel === 'fifo';
}

/** What the authorization prompt says the station is for. */
function stationReason(limits: StationLimits): string {
  const kinds = limits.virtual ? 'removable, USB, SD or virtual' : 'removable, USB or SD';
  return `arm a flashing station that erases every ${kinds} drive of ${formatBytes(limits.minSize)} to ${formatBytes(limits.maxSize)} inserted from now on`;
}

/**
 * Card helpers started through the armed station: the requests go out on its channel, their stderr
 * and exit come back. `send` returns false once root is gone: such a card ends at once.
 */
function cardElevation(send: (message: ToStation) => boolean, running: Map<number, RelayedProcess>): Elevation {
  let lastId = 0;
  return {
    name: 'station',
    channel: 'fifo',
    passesStdin: false,
    command: (_program, args) => ({ file: 'sluice-helper', args: [...args] }),
    // The user authorized the station; a card its root side refuses is no denial, and its stderr says why.
    denial: () => null,
    launch: (command): LaunchedProcess => {
      const id = ++lastId;
      const helper = new RelayedProcess(() => send({ type: 'kill', id }));
      running.set(id, helper);
      if (!send({ type: 'launch', id, args: command.args })) endRelayed(running, "the station's root side has ended");
      return helper;
    },
  };
}

/** Ends every card helper still waited for with `why` (root has gone, and says nothing more of them). */
function endRelayed(running: Map<number, RelayedProcess>, why: string): void {
  for (const helper of running.values()) {
    helper.reply({ type: 'stderr', text: `sluice: ${why}\n` });
    helper.reply({ type: 'exit', code: null, signal: null });
  }
  running.clear();
}

/** The failure of an arming that ended before root said it was armed. */
function notArmed(elevation: Elevation, exit: LaunchExit): Error {
  const denial = elevation.denial(exit);
  if (denial !== null)
    return jobError(
      'elevation-denied',
      `Arming the station needs administrator rights, and the ${denial}. Nothing was written.`,
    );
  const why = exit.signal !== null ? `killed by ${exit.signal}` : `exit code ${exit.code ?? 'unknown'}`;
  const reason = lastLine(exit.stderr);
  return jobError(
    'helper-died',
    `The station could not be armed (${why}${reason ? `: ${reason}` : ''}). Nothing was written.`,
  );
}

/** Starts the station's root side as `options.elevation` starts a helper: its command line carries the rules the prompt shows. */
function launchRoot(options: ArmOptions, transport: LaunchTransport): LaunchedProcess {
  const { elevation } = options;
  const program = options.program ?? builtHelperProgram();
  const argv = helperArgv({
    transport: transport.helperArgs,
    parentPid: process.pid,
    targets: [],
    source: null,
    station: options.limits,
  });
  const command = elevation.command(program.file, [...program.args, ...argv], {
    reason: stationReason(options.limits),
    interactive: options.interactive ?? false,
    ...(program.precondition === undefined ? {} : { precondition: program.precondition }),
  });
  const direct = transport.helperArgs.kind === 'inherited';
  return (
    elevation.launch?.(command) ??
    spawn(command.file, command.args, {
      stdio: ['ignore', 'ignore', 'pipe', ...transport.extraStdio],
      env: direct ? { ...process.env, ...program.env } : process.env,
    })
  );
}

/**
 * Arms the station's root side, once: resolves when root has noted the media present and serves
 * card requests; throws a JobError (elevation-denied, helper-died) when it never gets there.
 */
export async function armStation(options: ArmOptions): Promise<ArmedStation> {
  const transport = await createTransport(options.elevation);
  let root: LaunchedProcess;
  try {
    root = launchRoot(options, transport);
  } catch (error) {
    await transport.close();
    throw jobError('helper-died', `The station could not be armed (${errorText(error)}). Nothing was written.`);
  }
  let stderr = '';
  root.stderr?.setEncoding('utf8').on('data', (text: string) => {
    stderr = (stderr + text).slice(-4096);
    for (const line of text.split('\n')) if (line.trim() !== '') options.onLog?.(line.trim());
  });
  const exited = new Promise<LaunchExit>((resolve) => {
    root.on('error', (error) => resolve({ code: null, signal: null, stderr: error.message }));
    root.on('close', (code, signal) => resolve({ code, signal, stderr }));
  });
  const running = new Map<number, RelayedProcess>();
  let channel: Channel<FromStation, ToStation> | null = null;
  const armed = new Promise<boolean>((resolve) => {
    void transport.streams(root).then((streams) => {
      if (streams === null) return resolve(false);
      channel = new Channel<FromStation, ToStation>(streams, FromStation, {
        message: (message) => {
          if (message.type === 'armed') return resolve(true);
          const helper = running.get(message.id);
          if (message.type === 'exit') running.delete(message.id);
          helper?.reply(message);
        },
        error: (error) => options.onLog?.(`the station's root side sent something invalid: ${error.message}`),
        close: () => undefined,
      });
    });
  });
  if (!(await Promise.race([armed, exited.then(() => false)]))) {
    await transport.close();
    throw notArmed(options.elevation, await exited);
  }
  let gone = false;
  void exited.then(() => {
    gone = true;
    endRelayed(running, "the station's root side has ended");
  });
  const send = (message: ToStation) => {
    if (!gone) void channel?.send(message);
    return !gone;
  };
  const elevation = cardElevation(send, running);
  return {
    launch: (launch) => startHelper({ ...launch, elevation, program: { file: 'sluice-helper', args: [], env: {} } }),
    stop: async () => {
      // Closing our end of its channel is what stops it; it exits once the cards' helpers have.
      (channel as Channel<FromStation, ToStation> | null)?.close();
      await transport.close();
      // A card stuck in the kernel keeps root's side waiting for its helper; the station does not.
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, STOP_WAIT_MS).unref())]);
    },
  };
}
