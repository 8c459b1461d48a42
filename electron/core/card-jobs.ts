/**
 * The jobs on a card that write no image: the fake-capacity check and the erase. Both are offered for
 * cards and sticks, so a drive is refused as a target would be, and internal disks outright.
 */
import { ok, refuse, refused, type ApiResult } from '../../common/contracts/api-result.js';
import type { DriveInfo, EraseRequest } from '../../common/contracts/app-models.js';
import { errorText } from '../../common/domain/error-details.js';
import { judgeDrive } from '../../common/domain/verdict.js';
import { planErase } from '../../user/erase/erase-drive.js';
import type { DriveListing } from './drive-listing.js';
import { targetRefusal } from './drive-view.js';
import { startEraseSession } from './erase-session.js';
import type { SessionDeps } from './flash-session.js';
import { anotherCard } from './flash-start.js';
import type { JobRunner } from './job-runner.js';
import { startCheckSession } from './check-session.js';
import type { SettingsStore } from './settings-store.js';

/** The app service's pieces a card job uses. */
export interface CardJobPieces {
  runner: JobRunner;
  drives: DriveListing;
  settings: SettingsStore;
  session: SessionDeps;
}

/** A drive to check or erase, refused as a target would be whatever image is chosen (neither writes the image). */
async function cardOrStick(drives: DriveListing, device: string, medium: string | null): Promise<ApiResult<DriveInfo>> {
  const drive = await drives.find(device);
  if (!drive.ok) return drive;
  // The card the user saw when they chose it, which is what the helper is then told to accept.
  if (drive.value.medium !== medium) return anotherCard(device);
  const refusal = targetRefusal({ ...drive.value, verdicts: judgeDrive(drive.value, null) }, false);
  return refusal === null ? drive : refused(refusal);
}

export function startCheck(pieces: CardJobPieces, device: string, medium: string | null): Promise<ApiResult<null>> {
  const { runner } = pieces;
  return runner.whileStarting(async () => {
    const drive = await cardOrStick(pieces.drives, device, medium);
    if (!drive.ok) return drive;
    const busy = runner.busy();
    if (busy !== null) return busy;
    runner.run(startCheckSession(drive.value, pieces.settings.get().notifications, pieces.session));
    return ok(null);
  });
}

export function startErase(pieces: CardJobPieces, request: EraseRequest): Promise<ApiResult<null>> {
  const { runner } = pieces;
  return runner.whileStarting(async () => {
    const drive = await cardOrStick(pieces.drives, request.device, request.medium);
    if (!drive.ok) return drive;
    let plan;
    try {
      plan = planErase(drive.value, request.label);
    } catch (error) {
      return refuse(
        'invalid-request',
        `${request.device} cannot be erased so: ${errorText(error)}. Nothing was written.`,
      );
    }
    const busy = runner.busy();
    if (busy !== null) return busy;
    runner.run(startEraseSession(drive.value, plan, pieces.settings.get().notifications, pieces.session));
    return ok(null);
  });
}
