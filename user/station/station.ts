import type { Drive } from '../../common/domain/drive.js';
import { errorText } from '../../common/domain/error-details.js';
import {
  admitDrive,
  MAX_STATION_JOBS,
  type StationLogEntry,
  type StationRow,
  type StationRules,
} from '../../common/domain/station.js';
import { imageFacts } from '../drives/image-facts.js';
import { DriveScanner, type DriveEvent } from '../drives/scanner.js';
import { flashCard, type CardOutcome, type RunningCard } from './flash-card.js';
import { mediumId } from '../drives/medium.js';
import { driveIdentity } from './identity.js';
import { HeldRefusals } from './held-refusals.js';
import type { StationImage } from './station-image.js';
import type { StationLog } from './station-log.js';

export interface StationOptions {
  image: StationImage;
  rules: StationRules;
  log: StationLog;
  /** Stop taking cards after this many were admitted; null: until stopped. */
  count: number | null;
  /** Jobs at once (default and most: MAX_STATION_JOBS). */
  maxJobs?: number;
  /** Every change to a row: its appearance, each phase and progress report, its end. */
  onRow(row: StationRow): void;
  /** A problem of the station itself (the drive listing, the log): not any one card's. */
  onProblem(message: string): void;
}

interface Waiting {
  row: StationRow;
  drive: Drive;
  card: number;
}

/**
 * An armed flashing station: every drive that appears after arming (a new device, or a medium in
 * a reader that had none) is judged by the station's rules and, if admitted, gets its own job,
 * queued when MAX_STATION_JOBS already run. Each card ends in exactly one log line, refused cards
 * too; a refused card still in place is judged again when it changes (held-refusals.ts), and a
 * second line is logged for it only if it is then taken, or refused for another reason. A drive
 * present at arming is never touched, nor one whose card was already handled and is still in place.
 */
export class Station {
  private readonly scanner: DriveScanner;
  /**
   * Devices with a medium that the station has seen (present at arming, or handled since), with
   * that medium's identity (mediumId). Removing the medium forgets it.
   */
  private readonly seen = new Map<string, string | null>();
  /** Drive events are handled one at a time, in order: each may read the medium's identity first. */
  private events: Promise<void> = Promise.resolve();
  private readonly queue: Waiting[] = [];
  private readonly running = new Map<number, RunningCard>();
  /** Devices with a card queued or being written: whatever the listing says of them meanwhile, they get no second job. */
  private readonly busy = new Set<string>();
  private readonly jobs = new Set<Promise<void>>();
  private readonly refusals = new HeldRefusals(
    (row) => this.logRow(row, null),
    (job) => this.track(job),
  );
  /** Per device, the judging of its card under way: a card judged again waits for the judging before, so the last word is the latest. */
  private readonly judging = new Map<string, Promise<void>>();
  private nextRow = 1;
  private admitted = 0;
  private armed = false;
  private accepting = true;
  private listingFailed: Error | null = null;
  private resolveDone!: () => void;
  /** Resolves once the station takes no more cards (count reached, or stopped) and every job has ended and is logged. */
  readonly done: Promise<void>;
  private readonly maxJobs: number;

  constructor(private readonly options: StationOptions) {
    this.maxJobs = Math.min(options.maxJobs ?? MAX_STATION_JOBS, MAX_STATION_JOBS);
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    this.scanner = new DriveScanner({
      showAll: false,
      showVirtual: options.rules.virtual,
      onEvent: (event) => {
        this.events = this.events.then(() => this.onDriveEvent(event));
      },
      onError: (error) => {
        if (!this.armed) this.listingFailed = error;
        else
          options.onProblem(
            `Listing the drives failed: ${error.message}. Cards inserted now are taken once it works again.`,
          );
      },
    });
  }

  /**
   * Takes note of every drive present now (never to be touched) and starts watching. Returns the
   * drives present; throws when the drives cannot be listed, since then "present" is unknown.
   */
  async arm(): Promise<Drive[]> {
    await this.scanner.start();
    await this.events;
    if (this.listingFailed !== null) {
      await this.scanner.stop();
      throw new Error(
        `The drives cannot be listed, so the station cannot tell which were there before: ${this.listingFailed.message}`,
      );
    }
    this.armed = true;
    return this.scanner.drives;
  }

  /** Takes no more cards; with `cancel`, also asks every running job to stop. Resolves with `done`. */
  async stop(cancel: boolean): Promise<void> {
    this.accepting = false;
    await this.scanner.stop();
    this.refusals.flush();
    for (const waiting of this.queue.splice(0)) {
      this.track(
        this.finish(
          waiting.row,
          {
            result: { status: 'cancelled', target: waiting.drive.device, bytes: 0 },
            hostname: null,
            writeSpeed: null,
            verifySpeed: null,
            bytesSkipped: 0,
          },
          waiting.drive,
        ),
      );
    }
    if (cancel) for (const job of this.running.values()) job.cancel();
    this.settleIfIdle();
    await this.done;
  }

  private async onDriveEvent(event: DriveEvent): Promise<void> {
    const { drive } = event;
    if (this.busy.has(drive.device)) return;
    if (event.type === 'removed' || drive.size === null) {
      this.seen.delete(drive.device);
      this.refusals.forget(drive.device, true);
      return;
    }
    const medium = await mediumId(drive.device);
    const known = this.seen.get(drive.device);
    const changedSinceRefused = event.type === 'changed' && this.refusals.has(drive.device, medium);
    // Seen before, with the same medium (or no way to tell): the card already handled, or present at arming.
    if (!changedSinceRefused && known !== undefined && (medium === null || medium === known)) return;
    this.seen.set(drive.device, medium);
    // The first listing (while arming) only records what is there.
    if (this.armed && this.accepting) this.judge(drive, medium);
  }

  /**
   * Judges the card in `drive` after any judging of that device still under way. A judging that
   * fails is the station's problem, said as such; it never stops the next card in that device.
   */
  private judge(drive: Drive, medium: string | null): void {
    const before = this.judging.get(drive.device) ?? Promise.resolve();
    const judged = before
      .then(() => this.take(drive, medium))
      .catch((error: unknown) =>
        this.options.onProblem(`The card in ${drive.device} could not be judged: ${errorText(error)}`),
      );
    this.judging.set(drive.device, judged);
    this.track(
      judged.finally(() => {
        if (this.judging.get(drive.device) === judged) this.judging.delete(drive.device);
      }),
    );
  }

  /** A card that appeared: refused with its reason in the log, or queued for a job. */
  private async take(drive: Drive, medium: string | null): Promise<void> {
    if (this.busy.has(drive.device)) return;
    const { rules, image } = this.options;
    const identity = await driveIdentity(drive);
    const stored = await imageFacts(image.request.image, { size: rules.imageSize }, this.scanner.drives);
    const row: StationRow = {
      id: this.nextRow++,
      card: null,
      slot: identity.slot ?? drive.device,
      device: drive.device,
      model: identity.model,
      serial: identity.serial,
      capacity: drive.size,
      hostname: null,
      phase: 'queued',
      progress: null,
      result: null,
      code: null,
      message: null,
      startedAt: new Date().toISOString(),
      endedAt: null,
    };
    const admission = admitDrive(drive, rules, identity.slot, stored.storedOn);
    // A refusal writes nothing, so it is logged even when another card reached the count while this
    // one was being identified (two cards seen in one poll: the log must still have every card).
    if (!admission.admitted) {
      this.refusals.refuse(
        { ...row, phase: 'done', result: 'refused', code: admission.code, message: admission.message },
        medium,
      );
      return;
    }
    if (!this.accepting) return;
    const card = (image.profile?.nextCard ?? 1) + this.admitted;
    const queued = { ...row, card };
    // Shown before the card counts or its device is marked busy: a front end that fails to show it
    // (the judging's problem then) leaves the count, the card number and the device free.
    this.options.onRow(queued);
    this.refusals.forget(drive.device, false);
    this.admitted += 1;
    if (this.options.count !== null && this.admitted >= this.options.count) {
      this.accepting = false;
      void this.scanner.stop();
    }
    // Nothing from here throws: run() hands every failure of the job to its end.
    this.busy.add(drive.device);
    this.queue.push({ row: queued, drive, card });
    this.startNext();
  }

  private startNext(): void {
    while (this.running.size < this.maxJobs) {
      const waiting = this.queue.shift();
      if (waiting === undefined) break;
      this.run(waiting);
    }
    this.settleIfIdle();
  }

  private run({ row: queued, drive, card }: Waiting): void {
    let row = queued;
    const update = (next: StationRow) => {
      row = next;
      this.options.onRow(row);
    };
    const job = flashCard(this.options.image, drive.device, this.seen.get(drive.device) ?? null, card, {
      onPreparing: (hostname) => update({ ...row, hostname, phase: 'preparing' }),
      onProgress: (p) =>
        update({
          ...row,
          phase: p.phase,
          progress: {
            bytesDone: p.bytesDone,
            bytesTotal: p.bytesTotal,
            speed: p.speed,
            eta: p.eta,
            ...(p.limit === undefined ? {} : { limit: p.limit }),
          },
        }),
    });
    this.running.set(row.id, job);
    this.track(
      job.outcome
        .then((outcome) => this.finish(row, outcome, drive))
        .catch((error: unknown) =>
          this.options.onProblem(`The end of the card in ${drive.device} could not be handled: ${errorText(error)}`),
        )
        // Whatever failed on the way, the device and the job's place are free for the next card.
        .finally(() => {
          this.busy.delete(drive.device);
          this.running.delete(row.id);
          this.startNext();
        }),
    );
  }

  private track(job: Promise<void>): void {
    this.jobs.add(job);
    void job.finally(() => {
      this.jobs.delete(job);
      this.settleIfIdle();
    });
  }

  private async finish(row: StationRow, outcome: CardOutcome, drive: Drive): Promise<void> {
    const { result } = outcome;
    // What the device holds now is the card this job handled, whatever the kernel numbered it
    // meanwhile; a card pulled out during its job leaves its slot free for the next.
    if (this.scanner.drives.some((d) => d.device === drive.device && d.size !== null))
      this.seen.set(drive.device, await mediumId(drive.device));
    else this.seen.delete(drive.device);
    this.busy.delete(drive.device);
    const failure = result.status === 'failed' ? result : null;
    await this.logRow(
      {
        ...row,
        hostname: outcome.hostname ?? row.hostname,
        phase: 'done',
        result: result.status,
        code: failure?.code ?? null,
        message: failure?.message ?? null,
      },
      outcome,
    );
  }

  /**
   * Logs the row's line, then shows the row as done; a line that cannot be logged stops the station
   * taking cards. Never throws: a refusal's end and a job's both come here.
   */
  private async logRow(row: StationRow, outcome: CardOutcome | null): Promise<void> {
    const ended = { ...row, endedAt: new Date().toISOString() };
    const result = outcome?.result;
    const entry: StationLogEntry = {
      time: ended.endedAt,
      card: outcome === null ? null : row.card,
      slot: row.slot,
      device: row.device,
      model: row.model,
      serial: row.serial,
      capacity: row.capacity,
      capacityCheck:
        result?.status === 'ok' && result.capacityCheck !== undefined
          ? 'passed'
          : result?.status === 'failed' && result.code === 'target-fake-capacity'
            ? 'fake'
            : null,
      image: this.options.image.name,
      imageSha256: this.options.image.sha256,
      hostname: row.hostname,
      bytesWritten: result?.status === 'ok' && !result.written ? 0 : (result?.bytes ?? 0),
      bytesSkipped: outcome?.bytesSkipped ?? 0,
      writeSpeed: outcome?.writeSpeed ?? null,
      verifySpeed: outcome?.verifySpeed ?? null,
      repairedBlocks: result?.status === 'ok' ? (result.repaired?.blocks ?? 0) : 0,
      seconds: Math.round((Date.parse(ended.endedAt) - Date.parse(row.startedAt)) / 100) / 10,
      result: row.result ?? 'failed',
      code: row.code,
      message: row.message,
    };
    try {
      await this.options.log.append(entry);
    } catch (error) {
      this.accepting = false;
      void this.scanner.stop();
      this.options.onProblem(
        `The log ${this.options.log.path} cannot be written (${errorText(error)}); the station takes no more cards. Card ${row.device}: ${row.result ?? 'failed'}.`,
      );
    }
    try {
      this.options.onRow(ended);
    } catch (error) {
      // The line is logged: only the window failed, and the station goes on.
      this.options.onProblem(
        `The card in ${row.device} (${row.result ?? 'failed'}) could not be shown: ${errorText(error)}`,
      );
    }
  }

  private settleIfIdle(): void {
    if (!this.accepting && this.queue.length === 0 && this.running.size === 0 && this.jobs.size === 0)
      this.resolveDone();
  }
}
