import type { Drive } from '../../common/domain/drive.js';
import { helperNotStarted, type TargetResult } from '../../common/domain/result.js';
import { eraseJob } from '../../user/erase/erase-drive.js';
import type { PlanFile } from '../../user/erase/stream.js';
import type { ErasePlan } from '../../user/erase/volume.js';
import type { LaunchedHelper } from '../../user/launcher/launch.js';
import { runDesktopJob, type JobSession } from './desktop-job.js';
import type { SessionDeps } from './flash-session.js';

/** Runs one erase (the one `sluice erase` runs: the tables of `plan` through the flash path) with the desktop effects around it. */
export function startEraseSession(
  drive: Pick<Drive, 'device' | 'medium'>,
  plan: ErasePlan,
  notify: boolean,
  deps: SessionDeps,
): JobSession {
  const { device } = drive;
  let helper: LaunchedHelper | null = null;
  let cancelled = false;
  const erase = async (): Promise<TargetResult[]> => {
    let source: PlanFile | null = null;
    try {
      const start = await eraseJob(drive, plan);
      source = start.source;
      if (cancelled) return [{ status: 'cancelled', target: device, bytes: 0 }];
      helper = deps.launch({ source: source.fd, job: start.job, onProgress: deps.onProgress });
      return await helper.result;
    } catch (error) {
      return [helperNotStarted(device, 'erasing', error, 'Nothing was written.')];
    } finally {
      await source?.dispose();
    }
  };
  const cancel = () => {
    cancelled = true;
    helper?.cancel();
  };
  return { kind: 'erase', cancel, done: runDesktopJob({ kind: 'erase', verify: true, notify }, deps.effects, erase) };
}
