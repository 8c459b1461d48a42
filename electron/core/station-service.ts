import { writeFile } from 'node:fs/promises';
import { ok, refuse, type ApiResult } from '../../common/contracts/api-result.js';
import type { EmitEvent } from '../../common/contracts/ipc-contract.js';
import type { StationRequest, StationStatus } from '../../common/contracts/station-models.js';
import { ProfileSchema } from '../../common/domain/customisation.js';
import { errorText } from '../../common/domain/error-details.js';
import { JobError } from '../../common/domain/failure.js';
import { stationLogCsv, type StationRules } from '../../common/domain/station.js';
import { imageForCard, imageName, imageSha256, type StationImage } from '../../user/station/station-image.js';
import { readStationLog, StationLog } from '../../user/station/station-log.js';
import { Station } from '../../user/station/station.js';
import { decodeStationImage, type DecodedStationImage } from '../../user/station/decoded-image.js';
import type { ImageCache } from '../../user/cache/image-cache.js';
import * as v from 'valibot';
import type { DesktopEffects } from './desktop-job.js';
import type { HelperLauncher } from './flash-session.js';
import type { ArmedStation } from '../../user/launcher/armed-station.js';
import type { StationLimits } from '../../node/helper-command-line.js';
import type { ProbedImage } from './image-probe.js';
import type { JobRunner } from './job-runner.js';

/**
 * Arms a station's root side for `limits`, once for the whole batch (user/launcher/armed-station.ts);
 * null where each card's helper asks for root on its own (already root, or not Linux).
 */
export type StationArmer = (limits: StationLimits, image: { direct: boolean }) => Promise<ArmedStation> | null;

export interface StationServiceDeps {
  launch: HelperLauncher;
  armRoot: StationArmer;
  effects: DesktopEffects;
  emit: EmitEvent;
  /** The JSON Lines log every card is appended to (in the app's data folder). */
  logPath: string;
  /** Whether every card gets every byte of the image (the exact setting), as a flash does. */
  exact(): boolean;
  /** Whether loop devices and other virtual drives count as cards (the showVirtual setting). */
  virtual(): boolean;
  notifications(): boolean;
  showInFolder(path: string): void;
  /** The image cache, with the limit the settings give it: a compressed image is decoded into it once, at arming. */
  cache(): ImageCache;
}

/**
 * The app's flashing station: arms a Station (user/station/station.ts) with the chosen
 * image, relays its rows to the page, keeps the computer awake while armed, and says with a
 * notification when a card is done. While it is armed no other job starts (app-service.ts asks
 * `armed`), so no hand-started flash ever meets a card the station is writing.
 */
export class StationService {
  private station: Station | null = null;
  private status: StationStatus;
  private allowSleep: (() => void) | null = null;

  constructor(
    private readonly runner: JobRunner,
    private readonly deps: StationServiceDeps,
  ) {
    this.status = { armed: false, rules: null, present: [], log: deps.logPath, problem: null };
  }

  get armed(): boolean {
    return this.station !== null;
  }

  async arm(request: StationRequest, chosen: ProbedImage): Promise<ApiResult<StationStatus>> {
    if (this.station !== null) return refuse('busy', 'The station is already armed.');
    const busy = this.runner.busy();
    if (busy !== null) return busy;
    if (chosen.source.kind !== 'image' || chosen.local === null)
      return refuse(
        'no-image',
        'A station writes an image file, read again for every card: choose a downloaded image, not a web address or a drive.',
      );
    const { prepared } = chosen.source;
    const rules: StationRules = {
      imageSize: prepared.imageSize ?? chosen.info.size,
      minSize: request.minSize,
      maxSize: request.maxSize,
      slots: request.slots.length === 0 ? null : request.slots,
      virtual: this.deps.virtual(),
    };
    if (rules.minSize > rules.maxSize) return refuse('invalid-request', 'The smallest card size is above the largest.');
    let image: StationImage;
    let log: StationLog;
    let decoded: DecodedStationImage | null = null;
    let root: ArmedStation | null = null;
    try {
      const profile =
        request.hostname === null ? null : v.parse(ProfileSchema, { name: 'Station', hostname: request.hostname });
      image = {
        request: { image: chosen.info.source, partitions: false },
        prepared,
        exact: this.deps.exact(),
        profile,
        name: imageName({ image: chosen.info.source }),
        sha256: chosen.info.checksum?.sha256.toLowerCase() ?? (await imageSha256(chosen.info.source)),
        launch: this.deps.launch,
      };
      // The first card's customisation, planned now: an image that cannot take it is refused before arming.
      if (profile !== null) await imageForCard(image, profile.nextCard);
      decoded = await decodeStationImage(image, this.deps.cache());
      image = decoded.image;
      // The one password of the whole batch, where each card would otherwise ask for its own.
      root = await this.deps.armRoot({ ...rules, slots: [...(rules.slots ?? [])] }, image.prepared);
      if (root !== null) image = { ...image, launch: root.launch };
      log = await StationLog.open(this.deps.logPath);
    } catch (error) {
      await Promise.all([decoded?.dispose(), root?.stop()]);
      if (error instanceof JobError) return { ok: false, error: error.failure };
      return refuse('internal', `The station could not be armed: ${errorText(error)}`);
    }
    const copy = decoded;
    const station = new Station({
      image,
      rules,
      log,
      count: null,
      onRow: (row) => {
        this.deps.emit('stationRow', row);
        if (row.phase === 'done' && row.result !== null && this.deps.notifications()) {
          const who = `${row.hostname ?? row.model ?? 'Card'} (${row.slot})`;
          this.deps.effects.notify(
            row.result === 'ok' ? 'Card ready: insert the next one' : `Card ${row.result}`,
            row.result === 'ok'
              ? `${who} is written and verified: take it out.`
              : `${who}: ${row.message ?? row.code ?? ''}`,
          );
        }
      },
      onProblem: (problem) => this.publish({ ...this.status, problem }),
    });
    const armedRoot = root;
    void station.done.then(() => Promise.all([copy.dispose(), armedRoot?.stop()]));
    let present;
    try {
      present = await station.arm();
    } catch (error) {
      await log.close();
      await Promise.all([copy.dispose(), armedRoot?.stop()]);
      return refuse('internal', errorText(error));
    }
    this.station = station;
    this.allowSleep = this.deps.effects.preventSleep();
    void station.done.then(() => log.close());
    return ok(
      this.publish({
        armed: true,
        rules,
        present: present.map((d) => d.device),
        log: this.deps.logPath,
        problem: null,
      }),
    );
  }

  /** Takes no more cards, cancels those being written, and resolves once each has its log line. */
  async stop(): Promise<ApiResult<StationStatus>> {
    const station = this.station;
    if (station === null) return ok(this.status);
    await station.stop(true);
    this.station = null;
    this.allowSleep?.();
    this.allowSleep = null;
    return ok(this.publish({ ...this.status, armed: false }));
  }

  /** The log as CSV, written beside it and shown in the file manager. */
  async exportCsv(): Promise<ApiResult<string>> {
    const csvPath = this.deps.logPath.replace(/\.jsonl$/, '') + '.csv';
    try {
      const { entries } = await readStationLog(this.deps.logPath);
      await writeFile(csvPath, stationLogCsv(entries));
    } catch (error) {
      return refuse('internal', `The station log ${this.deps.logPath} could not be exported: ${errorText(error)}`);
    }
    this.deps.showInFolder(csvPath);
    return ok(csvPath);
  }

  private publish(status: StationStatus): StationStatus {
    this.status = status;
    this.deps.emit('stationStatus', status);
    return status;
  }
}
