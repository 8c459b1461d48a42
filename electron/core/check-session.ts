import type { Drive } from '../../common/domain/drive.js';
import { helperNotStarted, type TargetResult } from '../../common/domain/result.js';
import type { LaunchedHelper } from '../../user/launcher/launch.js';
import { runDesktopJob, type JobSession } from './desktop-job.js';
import type { SessionDeps } from './flash-session.js';

/** Runs one check (the one `sluice check` runs: writer/fake-capacity-check.ts in the helper) with the desktop effects around it. */
export function startCheckSession(
  drive: Pick<Drive, 'device' | 'medium'>,
  notify: boolean,
  deps: SessionDeps,
): JobSession {
  const { device } = drive;
  let helper: LaunchedHelper | null = null;
  const check = async (): Promise<TargetResult[]> => {
    try {
      helper = deps.launch({
        job: { kind: 'check', target: device, medium: drive.medium },
        onProgress: deps.onProgress,
      });
    } catch (error) {
      return [helperNotStarted(device, 'checking', error, 'Nothing was written.')];
    }
    return helper.result;
  };
  return {
    kind: 'check',
    cancel: () => helper?.cancel(),
    done: runDesktopJob({ kind: 'check', verify: true, notify }, deps.effects, check),
  };
}
