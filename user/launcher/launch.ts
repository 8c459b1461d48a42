/**
 * The app's side of one helper job: starts the helper (through an elevation tool when needed),
 * gives it the image and its job, relays progress, and turns whatever happens into one result per
 * reported drive. It never rejects and never reports success it did not receive. How the channel
 * reaches the helper is transport.ts's business; what each kind of job is called, JOB_WORDS's.
 */
import { spawn, type StdioOptions } from 'node:child_process';
import type { Readable } from 'node:stream';
import {
  FromHelper,
  jobDrives,
  MAX_OVERLAY_PIECE,
  type HelperJob,
  type ToHelper,
} from '../../common/contracts/helper-protocol.js';
import { errorText } from '../../common/domain/error-details.js';
import type { Failure } from '../../common/domain/failure.js';
import type { JobKind } from '../../common/domain/job.js';
import type { Progress } from '../../common/domain/progress.js';
import { DRIVE_INCOMPLETE, type SourceEnd, type TargetResult } from '../../common/domain/result.js';
import { Channel, type ChannelStreams } from '../../node/channel.js';
import { helperArgv, parseHelperArgv } from '../../node/helper-command-line.js';
import { closeFd } from '../../node/io.js';
import { ByteSource } from '../../node/byte-source.js';
import { createOsPipe, type OsPipe } from '../../node/os-pipe.js';
import { driveName } from '../drives/drive-name.js';
import { directLaunch } from './elevation/direct.js';
import {
  lastLine,
  type Elevation,
  type LaunchCommand,
  type LaunchedProcess,
  type LaunchExit,
} from './elevation/types.js';
import { builtHelperProgram, type HelperProgram } from './helper-program.js';
import { createTransport, type LaunchTransport } from './transport.js';
import { rangesReader } from './image-feed.js';
import { RepairAnswers } from './repair-answers.js';
import type { ImageReread } from '../images/feed/reread.js';

/** How much of the launched process's stderr is kept to explain a failure to start. */
const STDERR_TAIL_BYTES = 4096;

export interface HelperLaunchOptions {
  /**
   * The helper's fd 0 for a flash or a verify: what it reads image bytes from, an open image file
   * or a decoder's output. None for a backup (its bytes come out through driveBytes) or a clone,
   * whose source is a disk the helper opens itself.
   */
  source?: number | Readable | undefined;
  /** The one job the helper runs. */
  job: HelperJob;
  /** How the helper gets root (elevation/choose.ts). Default: spawned directly, the caller being root. */
  elevation?: Elevation | undefined;
  /** What program the helper is (helper-program.ts). Default: this runtime on the built entry. */
  program?: HelperProgram | undefined;
  /** A person at a terminal can answer a password prompt. */
  interactive?: boolean | undefined;
  onProgress?: ((progress: Progress) => void) | undefined;
  /** The helper's log messages, and every line the elevation tool or the helper writes to stderr. */
  onLog?: ((level: 'info' | 'warn', message: string) => void) | undefined;
  /**
   * A flash's customisation: per target, in order, the [offset, base64 bytes] ranges it gets after
   * the image (common/domain/customisation.ts PreparedCustomisation); a verify's has one entry.
   */
  overlays?: readonly (readonly (readonly [number, string])[])[] | undefined;
}

export interface LaunchedHelper {
  /** The helper's own process id once it runs and its channel works; null if it never got there. */
  readonly ready: Promise<number | null>;
  /** One result per target, in order; never rejects. */
  readonly result: Promise<TargetResult[]>;
  /**
   * Asks the helper to stop at its next block; it then syncs, closes the device and reports.
   * While an authorization prompt is still open, closes the prompt instead.
   */
  cancel(): void;
  /**
   * Tells the helper how the image stream ended on this side (a flash's awaitSourceEnd): it writes the
   * partition table only after an ok, and fails the job with the given failure otherwise.
   */
  endSource(end: SourceEnd): void;
  /**
   * Tells the helper that the image stream leaves out `extents` from here on (a skip message, for
   * a flash or a verify); resolves once the helper has them in place (its skip-ack), after which
   * the stream may go on without them.
   */
  skip(extents: [number, number][]): Promise<void>;
  /**
   * Answers the helper's repair requests (a flash whose image came as a stream: it asks for the
   * ranges it must rewrite) by reading the image again through `reread`.
   */
  answerRepairs(reread: ImageReread): void;
  /**
   * A backup's drive bytes as the helper sends them: a kernel pipe on its fd 0 where the elevation
   * tool passes one, else the transport's image FIFO or named pipe. Null for other jobs, or when
   * the helper never got to send any (its result says why). The reader closes it.
   */
  readonly driveBytes: Promise<ByteSource | null>;
  /**
   * Asks a backup of requested ranges for the drive's bytes of `ranges` next (a read message);
   * `last`: nothing more will be asked. They come out through driveBytes, in the order asked.
   */
  readRanges(ranges: [number, number][], last: boolean): void;
}

/** How results and the authorization prompt speak of each kind of job: a flash or a clone writes drives, a backup or a verify only reads one. */
const JOB_WORDS: Readonly<
  Record<JobKind, { process: string; needsRights: string; nothing: string; afterDeath: string }>
> = {
  flash: {
    process: 'The writing process',
    needsRights: 'Writing a disk',
    nothing: 'Nothing was written.',
    afterDeath: DRIVE_INCOMPLETE,
  },
  clone: {
    process: 'The writing process',
    needsRights: 'Writing a disk',
    nothing: 'Nothing was written.',
    afterDeath: DRIVE_INCOMPLETE,
  },
  backup: {
    process: 'The reading process',
    needsRights: 'Reading a whole disk',
    nothing: 'Nothing was read.',
    afterDeath: 'The drive was only read and is unchanged; back it up again.',
  },
  verify: {
    process: 'The reading process',
    needsRights: 'Reading a whole disk',
    nothing: 'Nothing was read.',
    afterDeath: 'The drive was only read and is unchanged; verify it again.',
  },
  check: {
    process: 'The checking process',
    needsRights: 'Checking a disk',
    nothing: 'Nothing was written.',
    afterDeath: 'Blocks it was testing (past the first MiB) may now hold its test markers instead of their data.',
  },
};

/** What the authorization prompt says the helper is for. */
function jobReason(job: HelperJob): string {
  switch (job.kind) {
    case 'flash':
      return `write a disk image to ${job.targets.join(', ')}`;
    case 'clone':
      return `write a copy of ${job.source} to ${job.targets.join(', ')}`;
    case 'backup':
      return `read ${job.source} to back it up`;
    case 'verify':
      return `read ${job.target} to compare it with a disk image`;
    case 'check':
      return `check ${job.target} for fake capacity (what it overwrites is saved and put back)`;
  }
}

function failAll(targets: readonly string[], failure: Failure): TargetResult[] {
  return targets.map((target) => ({ status: 'failed', target, bytes: 0, ...failure }));
}

function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return signal !== null ? `killed by ${signal}` : `exit code ${code ?? 'unknown'}`;
}

/** `job` with each of its drives under the OS's own name for it (see driveName). */
async function withDriveNames(job: HelperJob): Promise<HelperJob> {
  const names = (paths: readonly string[]) => Promise.all(paths.map(driveName));
  switch (job.kind) {
    case 'flash':
      return { ...job, targets: await names(job.targets) };
    case 'clone':
      return { ...job, source: await driveName(job.source), targets: await names(job.targets) };
    case 'backup':
      return { ...job, source: await driveName(job.source) };
    case 'verify':
    case 'check':
      return { ...job, target: await driveName(job.target) };
  }
}

/**
 * `job` for a helper that gets a copy of the image through the channel rather than the file
 * itself: the copy is read front to back, and carries only the job's ranges (imageCopy), as a
 * decoder's stream would.
 */
function readFrontToBack(job: HelperJob): HelperJob {
  if ((job.kind !== 'flash' && job.kind !== 'verify') || job.sourceSeekable !== true) return job;
  return { ...job, sourceSeekable: false };
}

/**
 * What goes through the channel for `job`: the image file's ranges the job takes (a file read in
 * place leaves its free space out), or the source as it is.
 */
function imageCopy(job: HelperJob, source: number | Readable): number | Readable {
  if (
    (job.kind !== 'flash' && job.kind !== 'verify') ||
    job.sourceSeekable !== true ||
    job.extents === undefined ||
    typeof source !== 'number'
  )
    return source;
  return rangesReader(source, job.extents);
}

/** The bytes each target's customisation holds. */
function overlayBytesOf(card: readonly (readonly [number, string])[]): number {
  return card.reduce((sum, [, data]) => sum + Buffer.byteLength(data, 'base64'), 0);
}

/** `job` announcing the customisation its drives get (the helper waits for exactly these bytes). */
function withOverlayBytes(job: HelperJob, overlays: HelperLaunchOptions['overlays']): HelperJob {
  if (overlays === undefined) return job;
  if (job.kind === 'flash') return { ...job, overlayBytes: overlays.map(overlayBytesOf) };
  if (job.kind === 'verify') return { ...job, overlayBytes: overlayBytesOf(overlays[0] ?? []) };
  return job;
}

/** The overlay messages that carry the customisation, each within a frame. */
function* overlayMessages(overlays: NonNullable<HelperLaunchOptions['overlays']>): Generator<ToHelper> {
  for (const [target, card] of overlays.entries()) {
    for (const [offset, data] of card) {
      const bytes = Buffer.from(data, 'base64');
      for (let at = 0; at < bytes.length; at += MAX_OVERLAY_PIECE) {
        yield {
          type: 'overlay',
          target,
          offset: offset + at,
          data: bytes.subarray(at, at + MAX_OVERLAY_PIECE).toString('base64'),
        };
      }
    }
  }
}

/** Starts one helper job. */
export function startHelper(options: HelperLaunchOptions): LaunchedHelper {
  const launch = new HelperLaunch(options);
  void launch.run();
  return launch;
}

/** A helper started before its job is complete (startHelperAhead): it runs the job once given, or is stopped. */
export interface HelperAhead {
  /**
   * Sends it `job`, whose kind, drives and source (the descriptor it was started with) must be
   * those it was started for, and relays its progress to `onProgress`.
   */
  run(job: HelperJob, onProgress?: (progress: Progress) => void): LaunchedHelper;
  /** Stops it before it had a job: it opened nothing. */
  abandon(): void;
  /**
   * Settles once the helper's process was spawned, or will never be: until then it may not yet
   * hold its own copy of the source, which must stay open (and unchanged) that long.
   */
  readonly spawned: Promise<void>;
}

/**
 * Starts the helper for `options.job` (its kind and drives; the rest of it may still change) while
 * the caller prepares the rest (the image probed, the drives judged), so that the helper's own start
 * (Node, its modules, its channel) overlaps that work instead of following it.
 * The helper waits for its job message and touches no drive until then. Only for a helper that
 * starts without asking anyone (direct: already root), fed through its fd 0 (`options.source`):
 * an authorization prompt must come after everything that can refuse the job.
 */
export function startHelperAhead(options: HelperLaunchOptions): HelperAhead {
  if ((options.elevation ?? directLaunch) !== directLaunch)
    throw new Error('only a helper started directly can be started ahead of its job');
  let give!: (job: HelperJob | null) => void;
  const given = new Promise<HelperJob | null>((resolve) => (give = resolve));
  const launch = new HelperLaunch(options, given);
  void launch.run();
  const provisional = jobDrives(options.job);
  return {
    run: (job, onProgress) => {
      const drives = jobDrives(job);
      const same =
        job.kind === options.job.kind &&
        drives.reads === provisional.reads &&
        drives.writes.join('\0') === provisional.writes.join('\0');
      if (!same) throw new Error(`the helper was started for another ${options.job.kind} job than the one it is given`);
      launch.relayProgress(onProgress);
      give(job);
      return launch;
    },
    abandon: () => {
      give(null);
      launch.cancel();
    },
    spawned: launch.spawned,
  };
}

class HelperLaunch implements LaunchedHelper {
  readonly ready: Promise<number | null>;
  readonly result: Promise<TargetResult[]>;
  private resolveReady!: (pid: number | null) => void;
  private resolveResult!: (results: TargetResult[]) => void;
  private readonly elevation: Elevation;
  /** The job as asked for; run() names its drives by their own names (driveName) before anything starts. */
  private job: HelperJob;
  private readonly words: (typeof JOB_WORDS)[JobKind];
  /** The drives results are reported for: the targets, or the drive a backup or a verify reads. */
  private reported: readonly string[];
  /** The first word on how the job ended: the helper's result, or a failure seen on this side. */
  private settled: TargetResult[] | null = null;
  private helperPid: number | null = null;
  private cancelRequested = false;
  /** The image stream's end, until the channel is there to carry it. */
  private sourceEnd: SourceEnd | null = null;
  /** Skip messages waiting for the channel, in order. */
  private readonly unsentSkips: [number, number][][] = [];
  /** A backup's read messages waiting for the channel, in order. */
  private readonly unsentReads: ToHelper[] = [];
  /** Each skip sent and not yet acknowledged, in order: the helper acknowledges in order. */
  private readonly unacknowledged: (() => void)[] = [];
  private child: LaunchedProcess | null = null;
  private channel: Channel<FromHelper, ToHelper> | null = null;
  /** The job message went out: what follows it (skips, the stream's end, a cancel) may go too. */
  private jobSent = false;
  private stderrTail = '';
  /** Ends the wait for a helper that never opens the image FIFO (it has exited). */
  private readonly helperGone = new AbortController();
  private readonly repairs = new RepairAnswers((message) => this.channel?.send(message) ?? Promise.resolve());
  readonly driveBytes: Promise<ByteSource | null>;
  /** Waits for the helper to open a backup's way out through the transport; it must end before the transport is closed. */
  private opening: Promise<unknown> = Promise.resolve();
  private resolveDriveBytes!: (bytes: ByteSource | null) => void;

  /** Where the progress goes: the options' listener, or the one a job started ahead gives later. */
  private onProgress: ((progress: Progress) => void) | undefined;
  /** Settles when the process was spawned (it holds its own copy of the source), or will not be. */
  readonly spawned: Promise<void>;
  private resolveSpawned!: () => void;

  /**
   * `given`: for a helper started ahead of its job, the job once the caller has it (null: none
   * comes, the helper is stopped); until then the options' job only names its kind and drives.
   */
  constructor(
    private readonly options: HelperLaunchOptions,
    private readonly given: Promise<HelperJob | null> | null = null,
  ) {
    this.onProgress = options.onProgress;
    this.spawned = new Promise((resolve) => (this.resolveSpawned = resolve));
    this.elevation = options.elevation ?? directLaunch;
    this.job = options.job;
    this.words = JOB_WORDS[this.job.kind];
    this.reported = jobDrives(this.job).reported;
    this.ready = new Promise((resolve) => (this.resolveReady = resolve));
    this.result = new Promise((resolve) => (this.resolveResult = resolve));
    this.driveBytes = new Promise((resolve) => (this.resolveDriveBytes = resolve));
  }

  cancel(): void {
    if (this.settled === null) this.stop();
  }

  relayProgress(onProgress: ((progress: Progress) => void) | undefined): void {
    this.onProgress = onProgress;
  }

  endSource(end: SourceEnd): void {
    if (this.sourceEnd !== null) return;
    this.sourceEnd = end;
    if (this.jobSent) this.sendSourceEnd(end);
  }

  skip(extents: [number, number][]): Promise<void> {
    return new Promise((resolve) => {
      this.unacknowledged.push(resolve);
      if (this.jobSent) void this.channel?.send({ type: 'skip', extents });
      else this.unsentSkips.push(extents);
    });
  }

  answerRepairs(reread: ImageReread): void {
    this.repairs.answerWith(reread);
  }

  readRanges(ranges: [number, number][], last: boolean): void {
    const message: ToHelper = { type: 'read', ranges, last };
    if (this.jobSent) void this.channel?.send(message);
    else this.unsentReads.push(message);
  }

  private sendSourceEnd(end: SourceEnd): void {
    const message: ToHelper = end.ok
      ? { type: 'source-end', ok: true, bytes: end.bytes }
      : { type: 'source-end', ok: false, ...end.failure };
    void this.channel?.send(message);
  }

  /** Tells the helper to stop at its next block; before it runs, closes the authorization prompt. */
  private stop(): void {
    this.cancelRequested = true;
    this.repairs.stop();
    // Before the job, a cancel goes out right after it (sendJob), or instead of it (abandoned).
    if (this.jobSent) void this.channel?.send({ type: 'cancel' });
    // An open authorization prompt has no helper behind it yet: closing the tool closes the prompt.
    // Once the helper runs as root this signal is refused (or sudo relays it, which the helper
    // treats as a cancel), and the cancel message above does the work.
    if (this.helperPid === null && this.elevation !== directLaunch) this.child?.kill('SIGTERM');
  }

  private settle(results: TargetResult[]): void {
    this.settled ??= results;
  }

  private fail(failure: Failure): void {
    this.settle(failAll(this.reported, failure));
  }

  /** The helper was never started: nothing can have been written. */
  private notStarted(why: unknown): void {
    this.fail({
      code: 'helper-died',
      message: `${this.words.process} could not be started (${errorText(why)}). ${this.words.nothing}`,
    });
    this.resolveDriveBytes(null);
    this.resolveReady(null);
    this.resolveSpawned();
    this.resolveResult(this.settled ?? []);
  }

  async run(): Promise<void> {
    // Before the prompt: it shows, and the helper is held to, the disks themselves, never a link
    // that could be turned to another disk once the user said yes.
    try {
      this.job = await withDriveNames(this.job);
    } catch (error) {
      return this.notStarted(error);
    }
    this.reported = jobDrives(this.job).reported;
    const { elevation, options, job } = this;
    let transport: LaunchTransport;
    try {
      transport = await createTransport(elevation);
    } catch (error) {
      return this.notStarted(`its channel could not be set up: ${errorText(error)}`);
    }
    // Cancelled while the channel was being made: nothing is started, so no prompt appears.
    if (this.cancelRequested) {
      await transport.close();
      this.resolveSpawned();
      this.resolveDriveBytes(null);
      this.resolveReady(null);
      this.resolveResult(this.reported.map((target) => ({ status: 'cancelled', target, bytes: 0 })));
      return;
    }
    const drives = jobDrives(job);
    const argv = helperArgv({
      transport: transport.helperArgs,
      parentPid: transport.helperArgs.kind === 'inherited' ? null : process.pid,
      targets: [...drives.writes],
      source: drives.reads,
    });
    const program = options.program ?? builtHelperProgram();
    let command: LaunchCommand;
    try {
      if (job.kind === 'backup' && !elevation.passesStdin && transport.backupBytes === null)
        throw new Error(`backing up a drive through ${elevation.name} is not supported yet`);
      // What the helper would refuse is refused before anyone is asked for a password, which a prompt showing it could garble.
      parseHelperArgv(argv);
      command = elevation.command(program.file, [...program.args, ...argv], {
        reason: jobReason(job),
        interactive: options.interactive ?? false,
        ...(program.precondition === undefined ? {} : { precondition: program.precondition }),
      });
    } catch (error) {
      await transport.close();
      return this.notStarted(error);
    }
    // A backup where the elevation tool passes descriptors: the helper sends the drive's bytes into a kernel pipe on its fd 0.
    let backupPipe: OsPipe | null = null;
    if (job.kind === 'backup' && elevation.passesStdin) {
      try {
        backupPipe = await createOsPipe();
      } catch (error) {
        await transport.close();
        return this.notStarted(`the pipe for the drive's bytes could not be made: ${errorText(error)}`);
      }
    }
    const direct = transport.helperArgs.kind === 'inherited';
    const stdin = backupPipe?.writeFd ?? (elevation.passesStdin ? (options.source ?? 'ignore') : 'ignore');
    const stdio: StdioOptions = [stdin, 'ignore', 'pipe', ...transport.extraStdio];
    let child: LaunchedProcess;
    try {
      child =
        elevation.launch?.(command) ??
        spawn(command.file, command.args, { stdio, env: direct ? { ...process.env, ...program.env } : process.env });
    } catch (error) {
      // A source that is no longer open, say: nothing started, so nothing was written.
      if (backupPipe !== null) await Promise.all([closeFd(backupPipe.writeFd), closeFd(backupPipe.readFd)]);
      await transport.close();
      return this.notStarted(error);
    } finally {
      this.resolveSpawned();
    }
    this.child = child;
    if (backupPipe !== null) {
      // The helper (or the tool starting it) has its own copy now; ours would hide the end of the stream.
      await closeFd(backupPipe.writeFd);
      this.resolveDriveBytes(new ByteSource(backupPipe.readFd));
    }
    child.stderr?.setEncoding('utf8').on('data', (text: string) => this.stderr(text));

    const exited = new Promise<LaunchExit>((resolve) => {
      child.on('error', (error) =>
        resolve({ code: null, signal: null, stderr: `${command.file} could not be run: ${error.message}` }),
      );
      child.on('close', (code, signal) => resolve({ code, signal, stderr: this.stderrTail }));
    });
    // A helper that never connects to its channel leaves only the exit to wait for.
    void Promise.race([transport.streams(child), exited.then(() => null)]).then((connected) => {
      if (connected !== null) this.open(connected, transport);
    });

    const exit = await exited;
    this.helperGone.abort();
    this.repairs.stop();
    await this.opening;
    this.resolveDriveBytes(null);
    await transport.close();
    this.resolveReady(this.helperPid);
    this.resolveResult(this.settled ?? this.explain(exit));
  }

  private open(streams: ChannelStreams, transport: LaunchTransport): void {
    const channel = new Channel<FromHelper, ToHelper>(streams, FromHelper, {
      message: (message) => {
        switch (message.type) {
          case 'ready':
            if (this.helperPid !== null) break;
            this.helperPid = message.pid;
            this.resolveReady(message.pid);
            this.passThrough(transport);
            break;
          case 'progress': {
            const { type: _type, ...progress } = message;
            this.onProgress?.(progress);
            break;
          }
          case 'log':
            this.options.onLog?.(message.level, message.message);
            break;
          case 'result':
            this.settle(message.results);
            break;
          case 'skip-ack':
            this.unacknowledged.shift()?.();
            break;
          case 'repair-request':
            this.repairs.request(message);
            break;
          case 'repair-ack':
            this.repairs.ack(message.id);
            break;
          case 'fatal':
            this.fail({ code: message.code, message: message.message });
            break;
        }
      },
      error: (error) => {
        this.fail({
          code: 'protocol-error',
          message: `${this.words.process} sent something invalid (${error.message}); the device may be incomplete.`,
        });
        this.stop();
      },
      close: () => undefined,
    });
    this.channel = channel;
    if (this.given === null) return this.sendJob(channel, this.job);
    void this.given.then(async (job) => {
      // None comes (the caller stopped it): a cancel before any job makes the helper exit.
      if (job === null) return void channel.send({ type: 'cancel' });
      try {
        this.sendJob(channel, await withDriveNames(job));
      } catch (error) {
        this.fail({
          code: 'helper-died',
          message: `${this.words.process} could not be given its job (${errorText(error)}). ${this.words.nothing}`,
        });
        void channel.send({ type: 'cancel' });
      }
    });
  }

  /** The job message, then whatever waited for it: skips, the customisation, the stream's end, a cancel. */
  private sendJob(channel: Channel<FromHelper, ToHelper>, job: HelperJob): void {
    this.job = job;
    this.jobSent = true;
    const { overlays } = this.options;
    void channel.send({
      type: 'job',
      job: withOverlayBytes(this.elevation.passesStdin ? job : readFrontToBack(job), overlays),
    });
    for (const extents of this.unsentSkips.splice(0)) void channel.send({ type: 'skip', extents });
    for (const message of this.unsentReads.splice(0)) void channel.send(message);
    if (overlays !== undefined) for (const message of overlayMessages(overlays)) void channel.send(message);
    if (this.sourceEnd !== null) this.sendSourceEnd(this.sourceEnd);
    if (this.cancelRequested) void channel.send({ type: 'cancel' });
  }

  /** Where the elevation tool passes no descriptor, the image (or a backup's bytes) goes through the transport. */
  private passThrough(transport: LaunchTransport): void {
    if (this.elevation.passesStdin) return;
    const stop = this.helperGone.signal;
    if (this.job.kind === 'backup') {
      if (transport.backupBytes === null) return;
      this.opening = transport.backupBytes(stop).then(
        (bytes) => this.resolveDriveBytes(bytes),
        (error: unknown) => {
          this.fail({
            code: 'source-read-error',
            message: `The drive's bytes could not be received from the reading process (${errorText(error)}). Nothing was saved.`,
          });
          this.resolveDriveBytes(null);
        },
      );
      return;
    }
    const { source } = this.options;
    if (source === undefined) return;
    void transport.feedImage(imageCopy(this.job, source), stop).then((error) => this.imageFailed(error));
  }

  /** The image could not be handed to the helper, which cannot tell a cut-off image from a short one. */
  private imageFailed(error: Error | null): void {
    if (error === null) return;
    this.fail({
      code: 'source-read-error',
      message: `The image could not be passed to the writing process (${error.message}). ${DRIVE_INCOMPLETE}`,
    });
    this.stop();
  }

  private stderr(text: string): void {
    this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL_BYTES);
    for (const line of text.split('\n')) if (line.trim().length > 0) this.options.onLog?.('warn', line.trim());
  }

  /** The result when the launched process ended without the helper reporting one. */
  private explain(exit: LaunchExit): TargetResult[] {
    const { words } = this;
    if (this.helperPid === null) {
      if (this.cancelRequested) return this.reported.map((target) => ({ status: 'cancelled', target, bytes: 0 }));
      const denial = this.elevation.denial(exit);
      if (denial !== null)
        return failAll(this.reported, {
          code: 'elevation-denied',
          message: `${words.needsRights} needs administrator rights, and the ${denial}. ${words.nothing}`,
        });
      const reason = lastLine(exit.stderr);
      const why =
        exit.code === null && exit.signal === null
          ? reason
          : `${describeExit(exit.code, exit.signal)}${reason ? `: ${reason}` : ''}`;
      return failAll(this.reported, {
        code: 'helper-died',
        message: `${words.process} could not be started (${why}). ${words.nothing}`,
      });
    }
    return failAll(this.reported, {
      code: 'helper-died',
      message: `${words.process} stopped unexpectedly (${describeExit(exit.code, exit.signal)}). ${words.afterDeath}`,
    });
  }
}
