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
    // Loaded when a listing is asked for, not with the module: its native part took about 10 ms of
    // every `sluice flash`'s start, before the image probe could be started (a flash lists while it probes).
    import('drivelist').then(({ default: drivelist }) => drivelist.list()),
    process.platform === 'linux' && (visibility.showVirtual || visibility.showAll) ? listLoopDrives() : Promise.resolve([]),
  ]);
  const fromDrivelist = drivesFromDrivelist(listed, running);
  const drives = [...(process.platform === 'linux' ? await recogniseSdCards(fromDrivelist) : fromDrivelist), ...loops];
  const shown = drives.filter((d) => isDriveShown(d, visibility)).sort((a, b) => byDevice(a.device, b.device));
  return Promise.all(shown.map(async (d) => ({ ...d, medium: await mediumId(d.device) })));
}

/** A loop device's name on Linux: /dev/loopN. */
const LINUX_LOOP = /^\/dev\/loop\d+$/;

/**
 * The drive this machine lists under `device` (virtual and system drives included), or undefined.
 * A Linux loop device is looked up among the loops alone: drivelist never lists one, and its
 * `lsblk --output-all` of every disk was the slowest step of `sluice probe` on a loop (about 40 ms
 * of its 190 ms here, with 20 loops attached; measured in the commit that added this).
 */
export async function findDrive(device: string): Promise<Drive | undefined> {
  if (!(process.platform === 'linux' && LINUX_LOOP.test(device))) return (await listDrives({ showAll: true, showVirtual: true })).find((d) => d.device === device);
  const loop = (await listLoopDrives(device)).find((d) => d.device === device);
  return loop === undefined ? undefined : { ...loop, medium: await mediumId(device) };
}
