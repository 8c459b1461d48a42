import { ok, refuse, refused, type ApiResult } from '../../common/contracts/api-result.js';
import { errorText } from '../../common/domain/error-details.js';
import { JobError } from '../../common/domain/failure.js';
import type { ImageInfo } from '../../common/domain/image.js';
import { helperNotStarted, type TargetResult } from '../../common/domain/result.js';
import type { PreparedImage } from '../../user/images/probe/probe.js';
import { prepareImageInChild } from '../../user/images/processes/probe-launch.js';
import { openSourceFeed, type SourceFeed } from '../../user/images/feed/source-feed.js';
import type { LaunchedHelper } from '../../user/launcher/launch.js';
import { runDesktopJob, type JobSession } from './desktop-job.js';
import type { DriveListing } from './drive-listing.js';
import type { SessionDeps } from './flash-session.js';
import type { JobRunner } from './job-runner.js';
import type { SettingsStore } from './settings-store.js';

/**
 * "Check against an image…": a drive compared with an image it should hold, writing nothing (what
 * `sluice verify` does). The image is chosen in the open dialog and probed first (every byte is
 * compared: a block map is not applied), then the helper reads the drive against it.
 */
export class ImageComparison {
  /** The image chosen for a drive, until its comparison starts. */
  private chosen: { device: string; medium: string | null; prepared: PreparedImage } | null = null;

  constructor(
    private readonly runner: JobRunner,
    private readonly drives: DriveListing,
    private readonly settings: SettingsStore,
    private readonly pickImage: () => Promise<string | null>,
  ) {}

  /** Opens the open dialog for the image to compare `device` with, and probes it; null when the user closed the dialog. */
  async choose(device: string): Promise<ApiResult<ImageInfo | null>> {
    const busy = this.runner.busy();
    if (busy !== null) return busy;
    const drive = await this.drives.find(device);
    if (!drive.ok) return drive;
    const path = await this.pickImage();
    if (path === null) return ok(null);
    try {
      const prepared = await prepareImageInChild({ image: path, bmap: false, partitions: false });
      this.chosen = { device, medium: drive.value.medium, prepared };
      return ok(prepared.info);
    } catch (error) {
      if (error instanceof JobError) return refused(error.failure);
      return refuse('source-read-error', `${path} could not be read: ${errorText(error)}`);
    }
  }

  /** Compares `device` with the image chosen for it. */
  start(device: string, session: SessionDeps): Promise<ApiResult<null>> {
    return this.runner.whileStarting(async () => {
      const chosen = this.chosen;
      if (chosen?.device !== device)
        return refuse('invalid-request', `Choose the image to compare ${device} with first.`);
      let feed: SourceFeed;
      try {
        feed = await openSourceFeed(chosen.prepared);
      } catch (error) {
        return refuse('source-read-error', `${chosen.prepared.info.name} could not be opened: ${errorText(error)}`);
      }
      const busy = this.runner.busy();
      if (busy !== null) {
        await feed.close();
        return busy;
      }
      this.chosen = null;
      this.runner.run(startVerifySession(device, chosen.medium, feed, this.settings.get().notifications, session));
      return ok(null);
    });
  }
}

/** `medium`: the one in the drive when its image was chosen (Drive.medium); the helper compares no other card. */
function startVerifySession(
  device: string,
  medium: string | null,
  feed: SourceFeed,
  notify: boolean,
  deps: SessionDeps,
): JobSession {
  let helper: LaunchedHelper | null = null;
  const compare = async (): Promise<TargetResult[]> => {
    try {
      // Compared under the rule a flash writes by: what the block map and the free space leave out is not read.
      const { imageSize, sourceSeekable, extents } = feed.start;
      helper = deps.launch({
        source: feed.source,
        job: {
          kind: 'verify',
          target: device,
          medium,
          imageSize,
          sourceSeekable,
          ...(extents === undefined ? {} : { extents }),
        },
        onProgress: deps.onProgress,
      });
    } catch (error) {
      await feed.close();
      return [helperNotStarted(device, 'reading', error, 'Nothing was read.')];
    }
    // A decoder's failure makes the comparison meaningless: its reason is the result.
    return feed.finish(helper.result, helper);
  };
  return {
    kind: 'verify',
    cancel: () => helper?.cancel(),
    done: runDesktopJob({ kind: 'verify', verify: true, notify }, deps.effects, compare),
  };
}
