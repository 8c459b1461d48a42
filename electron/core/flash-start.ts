/**
 * Starting a flash from the app: the request's drives checked against the app's own listing, the
 * image opened (customised, downloaded or decoded once for several cards), then the helper launched.
 * Each step refuses with a sentence the page shows; nothing is written before the helper starts.
 */
import { ok, refuse, refused, type ApiResult } from '../../common/contracts/api-result.js';
import type { DriveInfo, FlashRequest, JobEnd } from '../../common/contracts/app-models.js';
import type { EmitEvent } from '../../common/contracts/ipc-contract.js';
import { cardsOf, nextCardAfter, type Profile } from '../../common/domain/customisation.js';
import { errorText } from '../../common/domain/error-details.js';
import { JobError } from '../../common/domain/failure.js';
import type { ImageCache } from '../../user/cache/image-cache.js';
import type { CatalogueImage } from '../../user/catalogue/catalogue-image.js';
import { openSourceFeed } from '../../user/images/feed/source-feed.js';
import { readsOneDecodedCopy } from '../../user/launcher/transport.js';
import type { PreparedImage } from '../../user/images/probe/probe.js';
import type { AppCatalogue } from './app-catalogue.js';
import type { ChosenImage } from './chosen-image.js';
import { customisedOf, prepareCustomised, type Customised } from './customise.js';
import { reportDownload } from './download-progress.js';
import type { DriveConfirmations } from './drive-confirmations.js';
import { notListed, type DriveListing } from './drive-listing.js';
import { targetRefusal } from './drive-view.js';
import { startFlashSession, type FlashSessionJob, type SessionDeps } from './flash-session.js';
import type { ProbedImage } from './image-probe.js';
import { startInstaller } from './installer-session.js';
import type { JobRunner } from './job-runner.js';
import type { SettingsStore } from './settings-store.js';
import type { StationService } from './station-service.js';

/** The app service's pieces a flash uses. */
export interface FlashPieces {
  runner: JobRunner;
  drives: DriveListing;
  confirmations: DriveConfirmations;
  image: ChosenImage;
  catalogue: AppCatalogue;
  station: StationService;
  settings: SettingsStore;
  session: SessionDeps;
  /** The image cache with the settings' limit: a batch decodes its image into it once. */
  imageCache(): ImageCache;
  /** How a decoder hands its image to the helper the app starts (AppServiceDeps.decoderOutput). */
  decoderOutput(): 'stream' | 'relayed';
  emit: EmitEvent;
}

/** The image opened for writing, and what happens around the job because of where it came from. */
interface OpenedInput {
  input: FlashSessionJob['input'];
  /** Whether the image is downloaded as it is written (a URL, or a catalogue entry not in the cache). */
  downloading: boolean;
  /** After the flash: a cached download that failed its checks is removed (user/catalogue/catalogue-image.ts). */
  settle: CatalogueImage['settle'];
  customised: Customised | null;
}

export function anotherCard(device: string): ApiResult<never> {
  return refuse(
    'target-not-found',
    `${device} holds another card than the one you chose (swapped in the same reader?). Choose the drive again.`,
  );
}

/** Starts the flash `request` asks for, or says why not. */
export function startFlash(pieces: FlashPieces, request: FlashRequest): Promise<ApiResult<null>> {
  return pieces.runner.whileStarting(async () => {
    // Targets are checked against the app's own listing; right after start-up that is the first one.
    await pieces.drives.current();
    if (pieces.station.armed) return refuse('busy', 'The flashing station is armed: stop it before flashing by hand.');
    const named = pieces.image.forFlash(request.image);
    if (!named.ok) return named;
    const chosen = named.value;
    const held = (drive: DriveInfo) => pieces.confirmations.holds(drive);
    const refusal = refuseTargets(pieces, request, held) ?? (await pieces.image.unchanged(chosen));
    if (!refusal.ok) return refusal;
    if (request.isoMode === 'files')
      return startInstaller(pieces, request, chosen.info, () => takeTargets(pieces, request));
    const customised = await customiseFile(pieces, chosen, request);
    if (!customised.ok) return customised;
    const opened = await openInput(pieces, chosen, request, customised.value);
    if (!opened.ok) return opened;
    // Another job may have started while this one was being prepared, or used the typed names up.
    // No wait between taking them and the launch: one typed name starts one job.
    const busy = pieces.runner.busy() ?? takeTargets(pieces, request);
    if (busy !== null) {
      if (opened.value.input.kind === 'feed') await opened.value.input.feed.close();
      return busy;
    }
    launch(pieces, request, chosen, opened.value);
    return ok(null);
  });
}

/** Why `request`'s drives may not be written, from the app's own listing and the shared rules; the helper checks every device again from its own look. */
function refuseTargets(
  { drives }: Pick<FlashPieces, 'drives'>,
  request: FlashRequest,
  typed: (drive: DriveInfo) => boolean,
): ApiResult<never> | null {
  const listed = drives.judged();
  for (const [i, device] of request.targets.entries()) {
    const drive = listed.find((d) => d.device === device);
    if (drive === undefined) return notListed(device);
    const chosen = request.media?.[i];
    if (chosen !== undefined && chosen !== drive.medium) return anotherCard(device);
    const refusal = targetRefusal(drive, typed(drive));
    if (refusal !== null) return refused(refusal);
  }
  return null;
}

/**
 * Refuses as refuseTargets does, or else uses up the targets' typed names: all of them or none, so
 * a start refused for its last target keeps the names typed for the others. Called right before
 * the launch, with no wait between.
 */
function takeTargets(
  pieces: Pick<FlashPieces, 'drives' | 'confirmations'>,
  request: FlashRequest,
): ApiResult<never> | null {
  const refusal = refuseTargets(pieces, request, (drive) => pieces.confirmations.holds(drive));
  if (refusal !== null) return refusal;
  for (const drive of pieces.drives.judged())
    if (request.targets.includes(drive.device)) pieces.confirmations.take(drive);
  return null;
}

/** The customisation of an image from a file, a URL or a drive; a catalogue entry's is planned as it is prepared. */
async function customiseFile(
  pieces: FlashPieces,
  chosen: ProbedImage,
  request: FlashRequest,
): Promise<ApiResult<Customised | null>> {
  const profile = request.customise ?? null;
  if (profile === null || chosen.source.kind === 'catalogue') return ok(null);
  try {
    return ok(
      await prepareCustomised(chosen, profile, request.targets.length, (os, c) =>
        pieces.catalogue.prepareCustomised(os, c),
      ),
    );
  } catch (error) {
    if (error instanceof JobError) return refused(error.failure);
    throw error;
  }
}

/** Opens what is written: the source drive of a clone, or the image's bytes as a feed for the helper. */
async function openInput(
  pieces: FlashPieces,
  chosen: ProbedImage,
  request: FlashRequest,
  customised: Customised | null,
): Promise<ApiResult<OpenedInput>> {
  const downloading = chosen.info.origin === 'url';
  const settle: CatalogueImage['settle'] = async () => undefined;
  const { source } = chosen;
  if (source.kind === 'drive')
    return ok({
      input: { kind: 'drive', device: source.device, medium: source.medium },
      downloading,
      settle,
      customised,
    });
  try {
    const opened =
      source.kind === 'catalogue'
        ? await prepareEntry(pieces, source.os, request)
        : { prepared: source.prepared, downloading, settle, customised };
    const output = pieces.decoderOutput();
    // Several cards from a decoder: decoded once into the cache, each card reading the copy at its own pace.
    const decodeOnce = readsOneDecodedCopy(request.targets.length, output)
      ? (bytes: number) => pieces.imageCache().decodedCopy(bytes)
      : undefined;
    const feed = await openSourceFeed(opened.customised?.prepared ?? opened.prepared, {
      output,
      leaveOut: pieces.settings.get().exact ? 'nothing' : 'all',
      decodeOnce,
    });
    return ok({ ...opened, input: { kind: 'feed', feed } });
  } catch (error) {
    if (error instanceof JobError) return refused(error.failure);
    return refuse('source-read-error', `${chosen.info.name} could not be opened for writing: ${errorText(error)}`);
  }
}

/** A catalogue entry from the cache or downloading, with its customisation planned once, as it is prepared. */
async function prepareEntry(
  pieces: FlashPieces,
  os: Parameters<AppCatalogue['prepareForFlash']>[0],
  request: FlashRequest,
): Promise<Omit<OpenedInput, 'input'> & { prepared: PreparedImage }> {
  const profile = request.customise ?? null;
  const cards = profile === null ? null : cardsOf(profile, request.targets.length);
  const entry = await pieces.catalogue.prepareForFlash(os, cards ?? undefined);
  return {
    prepared: entry.prepared,
    downloading: entry.from === 'download',
    settle: entry.settle,
    customised: cards !== null ? customisedOf(entry.prepared) : null,
  };
}

/** Starts the helper on the opened input, and what follows its end: the download's report, the cache, the card count. */
function launch(pieces: FlashPieces, request: FlashRequest, chosen: ProbedImage, opened: OpenedInput): void {
  const { input, customised } = opened;
  const settings = pieces.settings.get();
  // The media checked above go to the helper, which refuses a drive that holds another by the time it opens it (a swap during the password prompt).
  const media = request.targets.map(
    (device) => pieces.drives.judged().find((d) => d.device === device)?.medium ?? null,
  );
  const started = startFlashSession(
    {
      input,
      targets: request.targets,
      media,
      verify: settings.verify,
      eject: settings.eject,
      capacityCheck: settings.capacityCheck,
      notify: settings.notifications,
      overlays: customised?.customisation.overlays,
    },
    pieces.session,
  );
  const stopReporting =
    opened.downloading && input.kind === 'feed'
      ? reportDownload(input.feed, chosen.info.sourceSize, (download) => pieces.emit('download', download))
      : () => undefined;
  const profile = request.customise ?? null;
  pieces.runner.run({
    ...started,
    done: started.done.then(async (end) => {
      stopReporting();
      await opened.settle(end.results).catch(() => undefined);
      // A saved profile's {n} counts on past the cards customised, before the page hears of the end.
      if (customised !== null && profile !== null) await countCards(pieces.settings, profile, end);
      return end;
    }),
  });
}

/**
 * After a customised flash: the saved profile of that name gives its next card the number after
 * the cards customised, so a classroom set flashed a few at a time gets pi-1, pi-2, ... once each.
 */
async function countCards(settings: SettingsStore, profile: Profile, end: JobEnd): Promise<void> {
  const next = nextCardAfter(profile.nextCard, end.results);
  const { profiles } = settings.get();
  if (next === profile.nextCard || !profiles.some((p) => p.name === profile.name)) return;
  await settings.update({
    profiles: profiles.map((p) => (p.name === profile.name ? { ...p, nextCard: Math.max(p.nextCard, next) } : p)),
  });
}
