/**
 * The app's side of one helper job: starts the helper (through an elevation tool when needed),
 * gives it the image and its instructions, relays progress, and turns whatever happens into one
 * result per target. It never rejects and never reports success it did not receive.
 */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import type { Progress } from '../../common/domain/progress.js';
import { FromHelper, jobDrives, type JobMessage, type ReadMessage, type StartMessage, type ToHelper, type VerifyMessage } from '../../common/contracts/helper-protocol.js';
import { errorText } from '../../common/domain/error-details.js';
import type { Failure, SourceEnd, TargetResult } from '../../common/domain/result.js';
import { closeFd } from '../../node/io.js';
import { Channel, type ChannelStreams } from '../../node/channel.js';
import { createChannelDir, type ChannelDir } from './channel-dir.js';
import { directLaunch } from './elevation/direct.js';
import { lastLine, type Elevation, type LaunchCommand, type LaunchExit } from './elevation/types.js';
import { helperArgv, type HelperTransport } from '../../node/helper-command-line.js';
import { copyImage } from './image-feed.js';
import { builtHelperProgram, type HelperProgram } from './helper-program.js';
import { createPipeServers, newPipeName, type PipeServers } from './pipe-servers.js';

/** How much of the launched process's stderr is kept to explain a failure to start. */
const STDERR_TAIL_BYTES = 4096;

export interface HelperJobOptions {
  /**
   * The helper's fd 0. A flash: what it reads image bytes from, an open image file or a decoder's
   * output. A backup (a read request): the write end of the pipe it sends the disk's bytes into;
   * startHelper closes it once the helper holds its own copy, or, where the elevation tool passes
   * no descriptor, once it has passed on what the helper sent through the image FIFO.
   * None for a clone, whose source is a disk the helper opens itself.
   */
  source?: number | Readable | undefined;
  /** The job: a flash or a clone (a start message), a backup (a read message), or a comparison of a disk with the image (a verify message). */
  start: Omit<StartMessage, 'type'> | Omit<ReadMessage, 'type'> | Omit<VerifyMessage, 'type'>;
  /** How the helper gets root (elevation/choose.ts). Default: spawned directly, the caller being root. */
  elevation?: Elevation | undefined;
  /** What program the helper is (helper-program.ts). Default: this runtime on the built entry. */
  program?: HelperProgram | undefined;
  /** A person at a terminal can answer a password prompt. */
  interactive?: boolean | undefined;
  onProgress?: ((progress: Progress) => void) | undefined;
  /** The helper's log messages, and every line the elevation tool or the helper writes to stderr. */
  onLog?: ((level: 'info' | 'warn', message: string) => void) | undefined;
}

export interface HelperJob {
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
   * Tells the helper how the image stream ended on this side (start.awaitSourceEnd): it writes the
   * partition table only after an ok, and fails the job with the given failure otherwise.
   */
  endSource(end: SourceEnd): void;
}

/** The message for `start`, told apart by what each kind alone carries. */
export function jobMessage(start: HelperJobOptions['start']): JobMessage {
  if ('targets' in start) return { type: 'start', ...start };
  if ('device' in start) return { type: 'verify', ...start };
  return { type: 'read', ...start };
}

/** What the authorization prompt says the helper is for. */
function jobReason(job: JobMessage): string {
  switch (job.type) {
    case 'start':
      return `write ${job.sourceDevice === undefined ? 'a disk image' : `a copy of ${job.sourceDevice}`} to ${job.targets.join(', ')}`;
    case 'read':
      return `read ${job.source} to back it up`;
    case 'verify':
      return `read ${job.device} to compare it with a disk image`;
  }
}

function failAll(targets: readonly string[], failure: Failure): TargetResult[] {
  return targets.map((target) => ({ status: 'failed', target, bytes: 0, ...failure }));
}

function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return signal !== null ? `killed by ${signal}` : `exit code ${code ?? 'unknown'}`;
}

/** Starts one helper job. */
export function startHelper(options: HelperJobOptions): HelperJob {
  const job = new HelperLaunch(options);
  void job.run();
  return job;
}

class HelperLaunch implements HelperJob {
  readonly ready: Promise<number | null>;
  readonly result: Promise<TargetResult[]>;
  private resolveReady!: (pid: number | null) => void;
  private resolveResult!: (results: TargetResult[]) => void;
  private readonly elevation: Elevation;
  private readonly job: JobMessage;
  /** The drives results are reported for: the targets, or the drive a backup or a verify reads. */
  private readonly targets: readonly string[];
  private settled: TargetResult[] | null = null;
  private helperPid: number | null = null;
  private cancelRequested = false;
  private sourceEnd: SourceEnd | null = null;
  private child: ChildProcess | null = null;
  private channel: Channel<FromHelper, ToHelper> | null = null;
  private stderrTail = '';
  /** Ends the wait for a helper that never opens the image FIFO. */
  private readonly stopFeeding = new AbortController();
  /** A backup's bytes being passed on from the image FIFO; it must end before the FIFO is deleted. */
  private draining: Promise<unknown> | null = null;
  /** A backup's pipe end (options.source), until it is closed or handed to the drain. */
  private backupOut: number | null = null;

  constructor(private readonly options: HelperJobOptions) {
    this.elevation = options.elevation ?? directLaunch;
    this.job = jobMessage(options.start);
    if (this.job.type === 'read' && typeof options.source === 'number') this.backupOut = options.source;
    this.targets = jobDrives(this.job).reported;
    this.ready = new Promise((resolve) => (this.resolveReady = resolve));
    this.result = new Promise((resolve) => (this.resolveResult = resolve));
  }

  cancel(): void {
    if (this.settled === null) this.stop();
  }

  endSource(end: SourceEnd): void {
    if (this.sourceEnd !== null) return;
    this.sourceEnd = end;
    if (this.channel !== null) this.sendSourceEnd(end);
  }

  private sendSourceEnd(end: SourceEnd): void {
    const message: ToHelper = end.ok
      ? { type: 'source-end', ok: true, bytes: end.bytes }
      : { type: 'source-end', ok: false, code: end.failure.code, message: end.failure.message, offset: end.failure.offset };
    void this.channel?.send(message);
  }

  /** Tells the helper to stop at its next block; before it runs, closes the authorization prompt. */
  private stop(): void {
    this.cancelRequested = true;
    void this.channel?.send({ type: 'cancel' });
    // An open authorization prompt has no helper behind it yet: closing the tool closes the prompt.
    // Once the helper runs as root this signal is refused (or sudo relays it, which the helper
    // treats as a cancel), and the cancel message above does the work.
    if (this.helperPid === null && this.elevation !== directLaunch) this.child?.kill('SIGTERM');
  }

  private settle(results: TargetResult[]): void {
    this.settled ??= results;
  }

  private fail(failure: Failure): void {
    this.settle(failAll(this.targets, failure));
  }

  /** The helper was never started: nothing can have been written. */
  private notStarted(why: unknown): void {
    this.fail({ code: 'helper-died', message: `${this.words().process} could not be started (${errorText(why)}). ${this.words().nothing}` });
    void this.closeBackupOut().finally(() => {
      this.resolveReady(null);
      this.resolveResult(this.settled ?? []);
    });
  }

  async run(): Promise<void> {
    const { elevation, options } = this;
    const imageThroughChannel = !elevation.passesStdin;
    let dir: ChannelDir | null = null;
    let pipes: PipeServers | null = null;
    let transport: HelperTransport;
    try {
      if (elevation.channel === 'fifo') {
        dir = await createChannelDir(imageThroughChannel);
        transport = { kind: 'fifo', dir: dir.dir, imageFifo: imageThroughChannel };
      } else if (elevation.channel === 'named-pipe') {
        const name = newPipeName();
        pipes = createPipeServers(name, imageThroughChannel);
        transport = { kind: 'named-pipe', name };
      } else {
        transport = { kind: 'inherited' };
      }
    } catch (error) {
      return this.notStarted(`its channel could not be set up: ${errorText(error)}`);
    }

    const program = options.program ?? builtHelperProgram();
    const { job } = this;
    const drives = jobDrives(job);
    const argv = helperArgv({
      transport,
      parentPid: transport.kind === 'inherited' ? null : process.pid,
      targets: [...drives.writes],
      source: drives.reads,
    });
    let command: LaunchCommand;
    try {
      if (job.type === 'read' && !elevation.passesStdin && elevation.channel !== 'fifo') throw new Error(`backing up a drive through ${elevation.name} is not supported yet`);
      command = elevation.command(program.file, [...program.args, ...argv], {
        reason: jobReason(job),
        interactive: options.interactive ?? false,
      });
    } catch (error) {
      pipes?.close();
      await dir?.remove();
      return this.notStarted(error);
    }
    const stdio: StdioOptions = [elevation.passesStdin ? (options.source ?? 'ignore') : 'ignore', 'ignore', 'pipe', ...(transport.kind === 'inherited' ? ['pipe' as const] : [])];
    const child = spawn(command.file, command.args, {
      stdio,
      env: transport.kind === 'inherited' ? { ...process.env, ...program.env } : process.env,
    });
    this.child = child;
    // The helper (or the tool starting it) has its own copy now; ours would hide the end of the stream.
    if (elevation.passesStdin) await this.closeBackupOut();
    child.stderr?.setEncoding('utf8').on('data', (text: string) => this.stderr(text));

    const exited = new Promise<LaunchExit>((resolve) => {
      child.on('error', (error) => resolve({ code: null, signal: null, stderr: `${command.file} could not be run: ${error.message}` }));
      child.on('close', (code, signal) => resolve({ code, signal, stderr: this.stderrTail }));
    });

    const streams: Promise<ChannelStreams | null> =
      transport.kind === 'inherited' ? Promise.resolve({ input: child.stdio[3] as Socket, output: child.stdio[3] as Socket }) : dir !== null ? Promise.resolve(dir.streams) : (pipes?.control ?? Promise.resolve(null));
    // A helper that never connects to its pipes leaves only the exit to wait for.
    void Promise.race([streams, exited.then(() => null)]).then((connected) => {
      if (connected !== null) this.open(connected, dir, pipes);
    });

    const exit = await exited;
    this.stopFeeding.abort();
    await this.draining;
    await this.closeBackupOut();
    pipes?.close();
    await dir?.remove();
    this.resolveReady(this.helperPid);
    this.resolveResult(this.settled ?? this.explain(exit));
  }

  private open(streams: ChannelStreams, dir: ChannelDir | null, pipes: PipeServers | null): void {
    const channel = new Channel<FromHelper, ToHelper>(streams, FromHelper, {
      message: (message) => {
        switch (message.type) {
          case 'ready':
            if (this.helperPid !== null) break;
            this.helperPid = message.pid;
            this.resolveReady(message.pid);
            this.feedImage(dir, pipes);
            break;
          case 'progress': {
            const { type: _type, ...progress } = message;
            this.options.onProgress?.(progress);
            break;
          }
          case 'log':
            this.options.onLog?.(message.level, message.message);
            break;
          case 'result':
            this.settle(message.results);
            break;
          case 'fatal':
            this.fail({ code: message.code, message: message.message });
            break;
        }
      },
      error: (error) => {
        this.fail({ code: 'protocol-error', message: `The writing process sent something invalid (${error.message}); the device may be incomplete.` });
        this.stop();
      },
      close: () => undefined,
    });
    this.channel = channel;
    const { job } = this;
    void channel.send(job.type === 'start' ? { ...job, sourceSeekable: job.sourceSeekable && this.elevation.passesStdin } : job);
    if (this.sourceEnd !== null) this.sendSourceEnd(this.sourceEnd);
    if (this.cancelRequested) void channel.send({ type: 'cancel' });
  }

  /** Where the elevation tool passes no descriptor, the image goes through the channel's own FIFO or pipe. */
  private feedImage(dir: ChannelDir | null, pipes: PipeServers | null): void {
    const { source } = this.options;
    if (this.job.type === 'read') {
      const out = this.backupOut;
      if (dir === null || out === null || this.elevation.passesStdin) return;
      this.backupOut = null;
      this.draining = dir.drainImage(out, this.stopFeeding.signal).then((error) => {
        if (error !== null) this.fail({ code: 'source-read-error', message: `The drive's bytes could not be passed on from the reading process (${error.message}). Nothing usable was saved.` });
      });
      return;
    }
    if (source === undefined) return;
    if (dir !== null && !this.elevation.passesStdin) void dir.feedImage(source, this.stopFeeding.signal).then((error) => this.imageFailed(error));
    if (pipes?.image) void pipes.image.then(async (socket) => this.imageFailed(socket === null ? null : await copyImage(source, socket)));
  }

  /** How results speak of the helper: a flash writes a drive; a backup or a verify only reads one. */
  private words(): { process: string; needsRights: string; nothing: string; afterDeath: string } {
    if (this.job.type === 'start') return { process: 'The writing process', needsRights: 'Writing a disk', nothing: 'Nothing was written.', afterDeath: 'The device is incomplete; flash it again before use.' };
    const again = this.job.type === 'read' ? 'back it up again' : 'verify it again';
    return { process: 'The reading process', needsRights: 'Reading a whole disk', nothing: 'Nothing was read.', afterDeath: `The drive was only read and is unchanged; ${again}.` };
  }

  private async closeBackupOut(): Promise<void> {
    const out = this.backupOut;
    this.backupOut = null;
    if (out !== null) await closeFd(out);
  }

  /** The image could not be handed to the helper, which cannot tell a cut-off image from a short one. */
  private imageFailed(error: Error | null): void {
    if (error === null) return;
    this.fail({ code: 'source-read-error', message: `The image could not be passed to the writing process (${error.message}). The device is incomplete; flash it again.` });
    this.stop();
  }

  private stderr(text: string): void {
    this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL_BYTES);
    for (const line of text.split('\n')) if (line.trim().length > 0) this.options.onLog?.('warn', line.trim());
  }

  /** The result when the launched process ended without the helper reporting one. */
  private explain(exit: LaunchExit): TargetResult[] {
    if (this.helperPid === null) {
      if (this.cancelRequested) return this.targets.map((target) => ({ status: 'cancelled', target, bytes: 0 }));
      const denial = this.elevation.denial(exit);
      if (denial !== null) {
        const words = this.words();
        return failAll(this.targets, { code: 'elevation-denied', message: `${words.needsRights} needs administrator rights, and the ${denial}. ${words.nothing}` });
      }
      const reason = lastLine(exit.stderr);
      const why = exit.code === null && exit.signal === null ? reason : `${describeExit(exit.code, exit.signal)}${reason ? `: ${reason}` : ''}`;
      return failAll(this.targets, { code: 'helper-died', message: `${this.words().process} could not be started (${why}). ${this.words().nothing}` });
    }
    return failAll(this.targets, {
      code: 'helper-died',
      message: `${this.words().process} stopped unexpectedly (${describeExit(exit.code, exit.signal)}). ${this.words().afterDeath}`,
    });
  }
}

