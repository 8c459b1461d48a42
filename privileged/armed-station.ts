/**
 * An armed flashing station's root side: started once for a whole batch (one password), it starts
 * one card's helper for each card the unprivileged station asks for, and only for a card that
 * passes the station's rules as root itself sees them (card-admission.ts): a medium that arrived
 * after arming, a card, within the size range, in the named slots. It runs no job itself, opens no
 * drive and no image, never parses anything but its framed messages, and never listens: its
 * channel is the one the unprivileged side made (open-endpoints.ts). It exits when that side stops
 * the station (closes the channel) or goes away, after stopping the helpers still running.
 *
 * Why a helper process per card rather than every card's job in this one: a card whose helper
 * dies, or whose drive hangs a system call, ends only its own job, exactly as when each card was
 * authorized on its own; what a batch saves is the password and the elevation tool per card.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { checkChannelDir } from './fifo-endpoints.js';
import { admitCard, highestDiskSeq } from './card-admission.js';
import type { HelperEndpoints } from './endpoints.js';
import { watchParent } from './parent-watch.js';
import type { FromStation } from '../common/contracts/station-protocol.js';
import { MAX_STATION_HELPERS, STATION_REFUSED, ToStation } from '../common/contracts/station-protocol.js';
import { errorText } from '../common/domain/error-details.js';
import { Channel, type ProtocolError } from '../node/channel.js';
import { parseHelperArgv, type HelperArgs, type StationLimits } from '../node/helper-command-line.js';
import { exitProcess } from '../node/process-exit.js';

/**
 * The only PATH the cards' helpers look tools up in (umount, partx and the like), whatever
 * environment the elevation tool left: the same as pkexec's.
 */
const ROOT_PATH = '/usr/sbin:/usr/bin:/sbin:/bin';

type LaunchRequest = Extract<ToStation, { type: 'launch' }>;

/** The environment of a card's helper: the fixed PATH, and who asked (whose channel directory it checks), as this process got them. */
function helperEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: ROOT_PATH };
  for (const name of ['ELECTRON_RUN_AS_NODE', 'SUDO_UID', 'SUDO_GID', 'PKEXEC_UID']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

class ArmedStation {
  private readonly helpers = new Map<number, ChildProcess>();
  /** Devices with a helper running, and every medium a helper was started for: one job per card. */
  private readonly busy = new Set<string>();
  private readonly written = new Set<string>();
  private stopping = false;
  /** Requests are checked one at a time, so that two for the same card cannot both pass. */
  private requests: Promise<void> = Promise.resolve();
  private readonly channel: Channel<ToStation, FromStation>;

  constructor(
    endpoints: HelperEndpoints,
    private readonly limits: StationLimits,
    private readonly parentPid: number | null,
    private readonly armedAt: bigint,
  ) {
    this.channel = new Channel(endpoints, ToStation, {
      message: (message) => {
        // A launch that throws refuses its own card only: the chain goes on for the next.
        if (message.type === 'launch')
          this.requests = this.requests
            .then(() => this.launch(message))
            .catch((error: unknown) => this.refuse(message.id, errorText(error)));
        else this.helpers.get(message.id)?.kill('SIGTERM');
      },
      // A confused or hostile peer: no more cards.
      error: (error: ProtocolError) => this.stop(`the station refused its instructions: ${error.message}`),
      close: () => this.stop(null),
    });
  }

  armed(): void {
    void this.channel.send({ type: 'armed', pid: process.pid, diskseq: String(this.armedAt) });
  }

  /** Why `request` is not a card helper this station starts, or the command line it starts it with. */
  private async check(request: LaunchRequest): Promise<{ refused: string } | { argv: string[]; medium: string }> {
    let args: HelperArgs;
    try {
      args = parseHelperArgv(request.args);
    } catch (error) {
      return { refused: errorText(error) };
    }
    const [target, ...others] = args.targets;
    if (target === undefined || others.length > 0 || args.source !== null || args.station !== undefined)
      return { refused: 'a card helper writes exactly one drive' };
    if (args.medium !== undefined) return { refused: 'root names the medium itself' };
    if (args.transport.kind !== 'fifo') return { refused: 'its channel is not a directory of FIFOs' };
    if (args.parentPid !== this.parentPid) return { refused: `it would watch process ${args.parentPid ?? 'none'}` };
    if (this.helpers.size >= MAX_STATION_HELPERS) return { refused: `${MAX_STATION_HELPERS} cards are being written` };
    if (this.busy.has(target)) return { refused: `${target} is being written already` };
    try {
      await checkChannelDir(args.transport.dir);
    } catch (error) {
      return { refused: errorText(error) };
    }
    const admission = await admitCard(target, this.limits, this.armedAt);
    if (!admission.admitted) return { refused: admission.reason };
    if (this.written.has(admission.medium)) return { refused: `the card in ${target} was written already` };
    return { argv: ['--medium', admission.medium, ...request.args], medium: admission.medium };
  }

  private async launch(request: LaunchRequest): Promise<void> {
    const { id } = request;
    const checked = this.stopping ? { refused: 'the station is stopping' } : await this.check(request);
    if (this.helpers.has(id) || 'refused' in checked)
      return this.refuse(id, 'refused' in checked ? checked.refused : 'its id is in use');
    // This very program again (the same runtime, flags and entry the elevation tool started), as one card's helper.
    const helper = spawn(process.execPath, [...process.execArgv, process.argv[1] ?? '', ...checked.argv], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: helperEnv(),
    });
    const target = checked.argv[checked.argv.length - 1] ?? '';
    this.helpers.set(id, helper);
    this.busy.add(target);
    this.written.add(checked.medium);
    helper.stderr?.setEncoding('utf8').on('data', (text: string) => {
      void this.channel.send({ type: 'stderr', id, text: text.slice(0, 16384) });
    });
    helper.on('error', (error) => void this.channel.send({ type: 'stderr', id, text: `${error.message}\n` }));
    helper.on('close', (code, signal) => {
      this.helpers.delete(id);
      this.busy.delete(target);
      void this.channel.send({ type: 'exit', id, code, signal });
      if (this.stopping) this.exitWhenIdle();
    });
  }

  /** Tells the station that card `id` gets no helper, and why. */
  private refuse(id: number, why: string): void {
    void this.channel.send({ type: 'stderr', id, text: `sluice: the station's root side refused the card: ${why}\n` });
    void this.channel.send({ type: 'exit', id, code: STATION_REFUSED, signal: null });
  }

  /** No more cards: the helpers still running are asked to stop cleanly, and the station exits once they have. */
  stop(problem: string | null): void {
    if (this.stopping) return;
    this.stopping = true;
    if (problem !== null) process.stderr.write(`sluice-helper: ${problem}\n`);
    for (const helper of this.helpers.values()) helper.kill('SIGTERM');
    this.exitWhenIdle();
  }

  private exitWhenIdle(): void {
    if (this.helpers.size > 0) return;
    this.channel.close();
    exitProcess(0);
  }
}

/** Arms the station: notes the highest medium number present, says so, and serves card requests until stopped. */
export async function runArmedStation(
  args: HelperArgs,
  limits: StationLimits,
  endpoints: HelperEndpoints,
): Promise<void> {
  // A terminal's Ctrl-C reaches the whole process group: the unprivileged side decides what it means.
  process.on('SIGINT', () => undefined);
  const armedAt = await highestDiskSeq();
  if (armedAt === null) {
    process.stderr.write('sluice-helper: this kernel numbers no media (diskseq), so no card can be told new\n');
    exitProcess(5);
  }
  const station = new ArmedStation(endpoints, limits, args.parentPid, armedAt);
  process.on('SIGTERM', () => station.stop(null));
  if (args.parentPid !== null) watchParent(args.parentPid, () => station.stop(null));
  station.armed();
}
