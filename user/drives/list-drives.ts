import drivelist from 'drivelist';
import type { Drive } from '../../common/domain/drive.js';
import { isDriveShown, type DriveVisibility } from '../../common/domain/verdict.js';
import { drivesFromDrivelist, runningSystemMountpoints } from './from-drivelist.js';
import { listLoopDrives } from './linux-loops.js';
import { mediumId } from './medium.js';
import { recogniseSdCards } from './linux-sd-slots.js';

/** Orders /dev/sdb before /dev/sdc and /dev/loop2 before /dev/loop10. */
const byDevice = new Intl.Collator('en', { numeric: true }).compare;

/**
 * The drives this machine has, as `visibility` shows them: drivelist's listing (lsblk on Linux,
 * DiskArbitration on macOS, SetupAPI on Windows), plus, when virtual drives are shown on Linux,
 * the loop devices drivelist leaves out; each with the medium in it (Drive.medium).
 */
export async function listDrives(visibility: DriveVisibility): Promise<Drive[]> {
  const running = runningSystemMountpoints(process.platform, process.env);
  const [listed, loops] = await Promise.all([
    drivelist.list(),
    process.platform === 'linux' && (visibility.showVirtual || visibility.showAll) ? listLoopDrives() : Promise.resolve([]),
  ]);
  const fromDrivelist = drivesFromDrivelist(listed, running);
  const drives = [...(process.platform === 'linux' ? await recogniseSdCards(fromDrivelist) : fromDrivelist), ...loops];
  const shown = drives.filter((d) => isDriveShown(d, visibility)).sort((a, b) => byDevice(a.device, b.device));
  return Promise.all(shown.map(async (d) => ({ ...d, medium: await mediumId(d.device) })));
}
