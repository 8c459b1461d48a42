import type { Progress } from '../../common/domain/progress.js';
import { helperNotStarted, type TargetResult } from '../../common/domain/result.js';
import type { HelperJob } from '../../common/contracts/helper-protocol.js';
import type { HelperLaunchOptions, LaunchedHelper } from '../../user/launcher/launch.js';
import type { SourceFeed } from '../../user/images/feed/source-feed.js';
import { overallFraction } from '../../common/app/job-progress.js';
import { staged } from '../../common/app/bottleneck.js';
import { runDesktopJob, type DesktopEffects, type JobSession } from './desktop-job.js';

/**
 * Starts the privileged helper for one job: user/launcher/launch.ts startHelper with the app's
 * elevation (electron/main/main.ts), or the tests' launcher that only accepts their own loops.
 */
export type HelperLauncher = (options: HelperLaunchOptions) => LaunchedHelper;

export interface FlashSessionJob {
  /**
   * What is written: an image opened or being decoded as the user (handed to the helper as its fd 0
   * and closed at the end), or a whole drive the helper reads itself (a clone).
   */
  /** A drive to clone carries the medium the user chose in it (Drive.medium): the helper copies no other card. */
  input: { kind: 'feed'; feed: SourceFeed } | { kind: 'drive'; device: string; medium: string | null };
  /** Device paths, in the order the results come back. */
  targets: readonly string[];
  /** Per target, the medium the user chose in it (Drive.medium); the helper refuses another. */
  media?: readonly (string | null)[] | undefined;
  verify: boolean;
  /** The helper ejects each drive it wrote and verified; a failure to eject comes back as a warning on its ok result. */
  eject: boolean;
  /** Check each drive for fake capacity (a flash of an image; a clone fills what it copies). */
  capacityCheck: boolean;
  notify: boolean;
  /** Each target's customisation, in order: the byte ranges written after the image (electron/core/customise.ts). */
  overlays?: readonly (readonly (readonly [number, string])[])[] | undefined;
}

/** What a session needs from the app: the helper launcher, the desktop, and where progress goes. */
export interface SessionDeps {
  launch: HelperLauncher;
  effects: DesktopEffects;
  onProgress(progress: Progress): void;
}

/** Runs one flash (an image) or clone (a drive) through the helper, with the desktop effects around it. */
export function startFlashSession(job: FlashSessionJob, deps: SessionDeps): JobSession {
  const latest = new Map<string, Progress>();
  let helper: LaunchedHelper | null = null;
  const { input } = job;
  const targets = [...job.targets];
  const media = job.media === undefined ? {} : { media: [...job.media] };
  const helperJob: HelperJob =
    input.kind === 'feed'
      ? {
          kind: 'flash',
          targets,
          ...media,
          ...input.feed.start,
          verify: job.verify,
          eject: job.eject,
          ...(job.capacityCheck ? {} : { capacityCheck: false }),
        }
      : {
          kind: 'clone',
          source: input.device,
          sourceMedium: input.medium,
          targets,
          ...media,
          verify: job.verify,
          eject: job.eject,
        };

  const write = async (): Promise<TargetResult[]> => {
    const feed = input.kind === 'feed' ? input.feed : null;
    try {
      helper = deps.launch({
        ...(feed === null ? {} : { source: feed.source }),
        job: helperJob,
        overlays: job.overlays,
        onProgress: (report) => {
          const progress = staged(report, feed?.stage() ?? 'reading');
          latest.set(progress.target, progress);
          deps.onProgress(progress);
          deps.effects.setProgress(
            overallFraction(
              job.targets.map((d) => latest.get(d)),
              job.verify,
            ),
          );
        },
      });
    } catch (error) {
      await feed?.close();
      return job.targets.map((target) => helperNotStarted(target, 'writing', error, 'Nothing was written.'));
    }
    const running = helper;
    // The decoder's verdict reaches the helper, and a failed source is the reason a job failed.
    return feed === null ? running.result : feed.finish(running.result, running);
  };

  const kind = helperJob.kind;
  return {
    kind,
    cancel: () => helper?.cancel(),
    done: runDesktopJob({ kind, verify: job.verify, notify: job.notify }, deps.effects, write),
  };
}
