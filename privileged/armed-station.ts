/**
 * An armed flashing station's root side: started once for a whole batch (one password), it runs
 * one card's job for each card the unprivileged station asks for, and only for a card that passes
 * the station's rules as root itself sees them (card-admission.ts): a medium that arrived after
 * arming, a card, within the size range, in the named slots. Each job is a helper's job
 * (helper-job.ts) over the card's own channel, held to the medium root admitted; outside those jobs
 * the station opens no drive and no image, it never parses anything but framed messages, and it
 * never listens: each channel is one the unprivileged side made (open-endpoints.ts). It exits when that side stops the
 * station (closes the channel) or goes away, after stopping the jobs still running.
 *
 * Why every card's job in this one process rather than a helper process per card: a card's own
 * process cost about 0.27 s of CPU (Node's start and module load 0.08 s, then the job with its
 * lazily loaded writer), where a card's job in this process costs about 0.1 s (16 cards at 8 MB/s,
 * 128 MiB image: 1.6 s of CPU in all). A card whose drive hangs a system call holds only its own
 * threads of the pool, which is sized for every card at once (main.ts), so the other cards go on;
 * a fault of this process itself ends every card's job, each with its helper-died result.
 */
import { checkChannelDir } from './fifo-endpoints.js';
import { EXIT, serveJob, type ServedJob } from './helper-job.js';
import { openHelperEndpoints } from './open-endpoints.js';
import { admitCard, highestDiskSeq } from './card-admission.js';
import type { HelperEndpoints } from './endpoints.js';
import { watchParent } from './parent-watch.js';
import type { FromStation } from '../common/contracts/station-protocol.js';
import { MAX_STATION_HELPERS, STATION_REFUSED, ToStation } from '../common/contracts/station-protocol.js';
import { errorText } from '../common/domain/error-details.js';
import { Channel, type ProtocolError } from '../node/channel.js';
import { cardCommandLine, parseHelperArgv, type HelperArgs, type StationLimits } from '../node/helper-command-line.js';
import { exitProcess } from '../node/process-exit.js';
import { RELEASE_WAIT_MS } from '../node/fifo-open.js';

/**
 * The only PATH the cards' jobs look tools up in (umount, partx and the like), whatever
 * environment the elevation tool left: the same as pkexec's.
 */
const ROOT_PATH = '/usr/sbin:/usr/bin:/sbin:/bin';

type LaunchRequest = Extract<ToStation, { type: 'launch' }>;

/** Leaves this process the environment a card's job runs in: the fixed PATH, and who asked (whose channel directories it checks). */
function keepJobEnv(): void {
  const keep = new Set(['SUDO_UID', 'SUDO_GID', 'PKEXEC_UID']);
  for (const name of Object.keys(process.env)) if (!keep.has(name)) delete process.env[name];
  process.env.PATH = ROOT_PATH;
}

/**
 * Closes a card's image FIFO at its job's end. An open of it that cannot be called off (off Linux,
 * the app removed or replaced the FIFO; see fifo-open.ts) holds neither the card's end nor a
 * stop: it is only logged.
 */
async function releaseCardImage(endpoints: HelperEndpoints, target: string): Promise<void> {
  if (await endpoints.releaseImage()) return;
  process.stderr.write(
    `sluice-helper: ${target}'s job has ended, but the open of its image FIFO has not returned within ` +
      `${RELEASE_WAIT_MS / 1000} s: a thread of the pool stays blocked in it\n`,
  );
}

class ArmedStation {
  private readonly jobs = new Map<number, ServedJob>();
  /** Devices with a job running, and every medium a job was started for: one job per card. */
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
        else this.jobs.get(message.id)?.stop();
      },
      // A confused or hostile peer: no more cards.
      error: (error: ProtocolError) => this.stop(`the station refused its instructions: ${error.message}`),
      close: () => this.stop(null),
    });
  }

  armed(): void {
    void this.channel.send({ type: 'armed', pid: process.pid, diskseq: String(this.armedAt) });
  }

  /** Why `request` is not a card job this station runs, or the command line it runs it for, held to the medium admitted. */
  private async check(request: LaunchRequest): Promise<{ refused: string } | { args: HelperArgs }> {
    let args: HelperArgs;
    try {
      args = parseHelperArgv(request.args);
    } catch (error) {
      return { refused: errorText(error) };
    }
    const card = cardCommandLine(args);
    if ('refused' in card) return card;
    const { target } = card;
    if (args.parentPid !== this.parentPid) return { refused: `it would watch process ${args.parentPid ?? 'none'}` };
    if (this.jobs.size >= MAX_STATION_HELPERS) return { refused: `${MAX_STATION_HELPERS} cards are being written` };
    if (this.busy.has(target)) return { refused: `${target} is being written already` };
    try {
      await checkChannelDir(card.dir);
    } catch (error) {
      return { refused: errorText(error) };
    }
    const admission = await admitCard(target, this.limits, this.armedAt);
    if (!admission.admitted) return { refused: admission.reason };
    if (this.written.has(admission.medium)) return { refused: `the card in ${target} was written already` };
    return { args: { ...args, medium: admission.medium } };
  }

  private async launch(request: LaunchRequest): Promise<void> {
    const { id } = request;
    const checked = this.stopping ? { refused: 'the station is stopping' } : await this.check(request);
    if (this.jobs.has(id) || 'refused' in checked)
      return this.refuse(id, 'refused' in checked ? checked.refused : 'its id is in use');
    const { args } = checked;
    const target = args.targets[0] ?? '';
    const medium = args.medium ?? '';
    this.busy.add(target);
    this.written.add(medium);
    // Held here until the job's channel is open, so that a stop meanwhile waits for it.
    this.jobs.set(id, { stop: () => undefined });
    const ended = (code: number, why: string | null) => {
      if (why !== null) void this.channel.send({ type: 'stderr', id, text: `sluice-helper: ${why}\n` });
      this.jobs.delete(id);
      this.busy.delete(target);
      void this.channel.send({ type: 'exit', id, code, signal: null });
      if (this.stopping) this.exitWhenIdle();
    };
    let endpoints;
    try {
      endpoints = await openHelperEndpoints(args.transport);
    } catch (error) {
      return ended(EXIT.noChannel, `cannot open the channel to the app: ${errorText(error)}`);
    }
    // A process's descriptors close when it exits; this one goes on, so at the job's end it closes
    // the image FIFO, or calls off the open of one the app never opened, before the next card.
    const job = serveJob(args, endpoints, {
      exit: (code) => void releaseCardImage(endpoints, target).finally(() => ended(code, null)),
    });
    this.jobs.set(id, job);
    if (this.stopping) job.stop();
  }

  /** Tells the station that card `id` gets no job, and why. */
  private refuse(id: number, why: string): void {
    void this.channel.send({ type: 'stderr', id, text: `sluice: the station's root side refused the card: ${why}\n` });
    void this.channel.send({ type: 'exit', id, code: STATION_REFUSED, signal: null });
  }

  /** No more cards: the jobs still running are asked to stop cleanly, and the station exits once they have. */
  stop(problem: string | null): void {
    if (this.stopping) return;
    this.stopping = true;
    if (problem !== null) process.stderr.write(`sluice-helper: ${problem}\n`);
    for (const job of this.jobs.values()) job.stop();
    this.exitWhenIdle();
  }

  private exitWhenIdle(): void {
    if (this.jobs.size > 0) return;
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
  keepJobEnv();
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
