import type { Progress } from '../../worker/common/progress.js';
import type { TargetResult } from '../../worker/common/result.js';
import type { HelperJob, HelperJobOptions } from '../../worker/helper/launch.js';
import type { SourceFeed } from '../../worker/sources/source-feed.js';
import { overallFraction } from '../common/flash-progress.js';
import type { FlashEnd } from '../common/models.js';
import { summarizeFlash } from '../common/outcome.js';

/**
 * Starts the privileged helper for one job: worker/helper/launch.ts startHelper with the app's
 * elevation (electron/main/main.ts), or the tests' launcher that only accepts their own loops.
 */
export type HelperLauncher = (options: HelperJobOptions) => HelperJob;

/**
 * The desktop pieces a flash touches, by interface: Electron implements them (electron/main/
 * desktop-effects.ts), tests pass a recorder, and this module runs under plain Node.
 */
export interface DesktopEffects {
  /** Keeps the computer from sleeping mid-write; returns what lets it sleep again. */
  preventSleep(): () => void;
  /** Taskbar/dock progress, 0 to 1; null removes it. */
  setProgress(fraction: number | null): void;
  notify(title: string, body: string): void;
}

export interface FlashSessionJob {
  /**
   * What is written: an image opened or being decoded as the user (handed to the helper as its fd 0
   * and closed at the end), or a whole drive the helper reads itself (a clone).
   */
  input: { kind: 'feed'; feed: SourceFeed } | { kind: 'drive'; device: string; size: number };
  /** Device paths, in the order the results come back. */
  targets: readonly string[];
  verify: boolean;
  /** The helper ejects each drive it wrote and verified; a failure to eject comes back as a warning on its ok result. */
  eject: boolean;
  notify: boolean;
}

export interface FlashSessionDeps {
  launch: HelperLauncher;
  effects: DesktopEffects;
  onProgress(progress: Progress): void;
}

export interface FlashSession {
  /** Asks the helper to stop; `done` then resolves with `cancelled` results. */
  cancel(): void;
  /** How the job ended; never rejects. */
  readonly done: Promise<FlashEnd>;
}

/** Runs one flash job through the helper, with the desktop effects around it. */
export function startFlashSession(job: FlashSessionJob, deps: FlashSessionDeps): FlashSession {
  const started = performance.now();
  const latest = new Map<string, Progress>();
  const allowSleep = deps.effects.preventSleep();

  let helper: HelperJob | null = null;
  let launchFailure: string | null = null;
  try {
    const { input } = job;
    helper = deps.launch({
      ...(input.kind === 'feed' ? { source: input.feed.source } : {}),
      start: {
        targets: [...job.targets],
        ...(input.kind === 'feed' ? input.feed.start : { imageSize: input.size, sourceSeekable: false, sourceDevice: input.device }),
        verify: job.verify,
        eject: job.eject,
      },
      onProgress: (progress) => {
        latest.set(progress.target, progress);
        deps.onProgress(progress);
        deps.effects.setProgress(overallFraction(job.targets.map((d) => latest.get(d)), job.verify));
      },
    });
  } catch (error) {
    launchFailure = error instanceof Error ? error.message : String(error);
  }

  const finish = async (): Promise<FlashEnd> => {
    try {
      const running = helper;
      const feed = job.input.kind === 'feed' ? job.input.feed : null;
      let results: TargetResult[];
      if (running === null) {
        await feed?.close();
        results = job.targets.map((target) => ({ status: 'failed', target, bytes: 0, code: 'helper-died', message: `The writing process could not start: ${launchFailure ?? 'unknown error'}. Nothing was written.` }));
      } else {
        // The decoder's verdict reaches the helper, and a failed source is the reason a job failed.
        results = feed === null ? await running.result : await feed.finish(running.result, (end) => running.endSource(end));
      }
      const end: FlashEnd = { results, verify: job.verify, seconds: (performance.now() - started) / 1000 };
      if (job.notify) {
        const summary = summarizeFlash(end);
        deps.effects.notify(summary.title, summary.body);
      }
      return end;
    } finally {
      allowSleep();
      deps.effects.setProgress(null);
    }
  };

  return { cancel: () => helper?.cancel(), done: finish() };
}
