import type { Drive } from '../../common/domain/drive.js';
import { isDriveShown, type DriveVisibility } from '../../common/domain/verdict.js';
import { drivesFromDrivelist, runningSystemMountpoints } from './from-drivelist.js';
import { listLoopDrives } from './linux-loops.js';
import { mediumId } from './medium.js';
import { recogniseSdCards } from './linux-sd-slots.js';

let collator: Intl.Collator | undefined;

/**
 * Orders /dev/sdb before /dev/sdc and /dev/loop2 before /dev/loop10. The collator is made on the
 * first listing, not with the module: making it loads ICU's collation data, 5 ms of the start of
 * every command that imports this module (measured under Node 24), and `sluice flash` to loop
 * devices never sorts.
 */
export function byDevice(a: string, b: string): number {
  collator ??= new Intl.Collator('en', { numeric: true });
  return collator.compare(a, b);
}

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
    process.platform === 'linux' && (visibility.showVirtual || visibility.showAll)
      ? listLoopDrives()
      : Promise.resolve([]),
  ]);
  const fromDrivelist = drivesFromDrivelist(listed, running);
  const drives = [...(process.platform === 'linux' ? await recogniseSdCards(fromDrivelist) : fromDrivelist), ...loops];
  return withMedia(drives.filter((d) => isDriveShown(d, visibility)).sort((a, b) => byDevice(a.device, b.device)));
}

/** `drives`, each with the medium in it now (Drive.medium). */
function withMedia(drives: readonly Drive[]): Promise<Drive[]> {
  return Promise.all(drives.map(async (d) => ({ ...d, medium: await mediumId(d.device) })));
}

/** A loop device's name on Linux: /dev/loopN. */
const LINUX_LOOP = /^\/dev\/loop\d+$/;

/**
 * The drives to judge `devices` by (virtual and system drives included). When every one is a Linux
 * loop device, the loops alone: drivelist never lists a loop, so its `lsblk --output-all` of every
 * disk adds nothing to their judgement, and it costs the most when a command is busiest: it
 * would be the slowest step of a card check on a loop, and in a flash it would compete with the
 * probe and the helper for the CPU while they start.
 * One verdict can differ, toward refusing: an image on another disk's filesystem mounted inside a
 * loop target's mount is then taken to be stored on that loop, which is refused.
 */
export async function listDrivesFor(devices: readonly string[]): Promise<Drive[]> {
  if (!(process.platform === 'linux' && devices.length > 0 && devices.every((device) => LINUX_LOOP.test(device))))
    return listDrives({ showAll: true, showVirtual: true });
  return withMedia(await listLoopDrives(devices.length === 1 ? devices[0] : undefined));
}

/** The drive this machine lists under `device` (virtual and system drives included), or undefined. */
export async function findDrive(device: string): Promise<Drive | undefined> {
  return (await listDrivesFor([device])).find((d) => d.device === device);
}
