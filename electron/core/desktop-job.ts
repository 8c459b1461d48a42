import type { TargetResult } from '../../common/domain/result.js';
import type { AppJobKind } from '../../common/contracts/app-models.js';
import type { JobEnd } from '../../common/contracts/app-models.js';
import { summarizeJob } from '../../common/app/outcome.js';

/**
 * The desktop pieces a job touches, by interface: Electron implements them (electron/main/
 * desktop-effects.ts), tests pass a recorder, and the sessions run under plain Node.
 */
export interface DesktopEffects {
  /** Keeps the computer from sleeping mid-job; returns what lets it sleep again. */
  preventSleep(): () => void;
  /** Taskbar/dock progress, 0 to 1; null removes it. */
  setProgress(fraction: number | null): void;
  notify(title: string, body: string): void;
}

/** A job the app runs (a flash or a backup), as the app service holds it. */
export interface JobSession {
  readonly kind: AppJobKind;
  /** Asks the job to stop; `done` then resolves with `cancelled` results. */
  cancel(): void;
  /** How the job ended; never rejects. */
  readonly done: Promise<JobEnd>;
}

/**
 * Runs `work` with the computer kept awake, the taskbar progress removed at the end whatever
 * happened, and a notification saying how it ended. The keep-awake block is taken before `work`
 * starts (this function's synchronous part). `work` must not reject.
 */
export async function runDesktopJob(
  job: { kind: AppJobKind; verify: boolean; notify: boolean },
  effects: DesktopEffects,
  work: () => Promise<TargetResult[]>,
): Promise<JobEnd> {
  const started = performance.now();
  const allowSleep = effects.preventSleep();
  try {
    const results = await work();
    const end: JobEnd = { kind: job.kind, results, verify: job.verify, seconds: (performance.now() - started) / 1000 };
    if (job.notify) {
      const summary = summarizeJob(end);
      effects.notify(summary.title, summary.body);
    }
    return end;
  } finally {
    allowSleep();
    effects.setProgress(null);
  }
}
