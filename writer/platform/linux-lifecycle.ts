/**
 * Linux: what happens to a disk around a write. Unmount its filesystems first (refusing, before
 * unmounting anything, when a program is using one), make the kernel see the new partition table
 * afterwards, and power the drive off when asked.
 */
import { constants } from 'node:fs';
import { access, realpath, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { jobError } from '../../common/domain/failure.js';
import { describeHolders, findHolders, type Holder } from './linux-holders.js';
import {
  devnoFromText,
  devnoText,
  linuxDeviceNode,
  partitionDirs,
  readMounts,
  sysfsDir,
  type Mount,
} from './linux-sysfs.js';
import { findTool, runTool } from '../../node/run-tool.js';
import { NOTHING_HELD, type DeviceFacts, type VolumeHold } from './types.js';
import { errorText } from '../../common/domain/error-details.js';

function busyMessage(
  path: string,
  mount: Mount,
  holders: readonly Holder[],
  unmounted: readonly Mount[],
  umountSaid: string | null,
): string {
  const who =
    holders.length > 0
      ? `is in use by ${describeHolders(holders)}`
      : `could not be unmounted (${umountSaid ?? 'busy'})`;
  const what = holders.some((h) => h.how === 'working directory')
    ? 'Close those programs (or move them out of that folder)'
    : 'Close whatever uses it';
  return `${mount.mountpoint} (on ${path}) ${who}. ${what}, then try again. Nothing was written.${alreadyUnmounted(unmounted)}`;
}

function movedMessage(path: string, mount: Mount, unmounted: readonly Mount[]): string {
  return (
    `${mount.mountpoint} (on ${path}) no longer leads to that filesystem (renamed, or hidden under another mount), ` +
    `so it was not unmounted. Unmount it yourself, then try again. Nothing was written.${alreadyUnmounted(unmounted)}`
  );
}

function alreadyUnmounted(unmounted: readonly Mount[]): string {
  return unmounted.length > 0
    ? ` ${unmounted.map((m) => m.mountpoint).join(', ')} had already been unmounted.`
    : ' Nothing was unmounted.';
}

/**
 * Whether a mountpoint still leads, through no link, to the filesystem the mount table named.
 * The kernel unmounts by path only (umount(8) given a device looks its path up too), and root
 * follows whatever the path holds when it acts: a directory its user owns can be renamed and a
 * link to another filesystem put in its place, or the path hidden under a later mount. Checked
 * just before each unmount; what is left is the moment between this check and umount's own lookup.
 */
async function stillLeadsTo(mount: Mount): Promise<boolean> {
  try {
    return (
      (await realpath(mount.mountpoint)) === mount.mountpoint &&
      (await stat(mount.mountpoint)).dev === devnoFromText(mount.devno)
    );
  } catch {
    return false;
  }
}

/**
 * Unmounts every filesystem on the disk, newest mount first (a mount made inside another goes
 * before it). Programs using them are looked for first, so a busy disk is refused with every
 * filesystem left as it was. A lazy unmount is never used: it would report success while the
 * filesystem stays in use, and the write would then fail on the busy device or corrupt it.
 */
export async function unmountLinux(facts: DeviceFacts): Promise<VolumeHold> {
  const tree = new Set(facts.devices.map(devnoText));
  const mounts = (await readMounts()).filter((m) => tree.has(m.devno));
  if (mounts.length === 0) return NOTHING_HELD;

  const holders = await findHolders(new Set(mounts.map((m) => m.devno)));
  const held = holders[0];
  if (held !== undefined) {
    const mount = mounts.find((m) => m.devno === held.devno) ?? mounts[0];
    if (mount !== undefined) {
      throw jobError(
        'target-busy',
        busyMessage(
          facts.path,
          mount,
          holders.filter((h) => h.devno === held.devno),
          [],
          null,
        ),
      );
    }
  }

  const unmounted: Mount[] = [];
  for (const mount of [...mounts].reverse()) {
    if (!(await stillLeadsTo(mount))) {
      throw jobError('target-busy', movedMessage(facts.path, mount, unmounted));
    }
    try {
      await runTool('umount', [mount.mountpoint]);
    } catch (error) {
      // Something took hold between the look and the unmount, or holds it in a way /proc does not show.
      const late = await findHolders(new Set([mount.devno]));
      throw jobError('target-busy', busyMessage(facts.path, mount, late, unmounted, errorText(error)));
    }
    unmounted.push(mount);
  }
  return NOTHING_HELD;
}

/**
 * Drops the kernel's old partitions and adds those of the table now on the disk, through BLKPG
 * (partx), on the node of the device that was written (linuxDeviceNode), whatever its path leads
 * to by now. Node cannot issue BLKRRPART on the open descriptor without native code. Measured on this kernel: BLKRRPART (`blockdev --rereadpt`) succeeds on a loop device
 * yet adds no partitions, and `partx --update` can leave a stale partition behind when the new
 * table's first partition overlaps an old second one; deleting all and adding back does not.
 * Fresh partitions also get fresh block devices, with nothing cached from the old filesystems.
 * An image without a partition table (a bare filesystem) rightly leaves no partitions.
 */
export async function rereadPartitionsLinux(facts: DeviceFacts): Promise<void> {
  const node = await linuxDeviceNode(facts.rdev);
  // partx --delete fails ("range <1:0>") on a disk the kernel knows no partitions of.
  if ((await partitionDirs(sysfsDir(facts.rdev))).length > 0) await runTool('partx', ['--delete', node]);
  try {
    await runTool('partx', ['--add', node]);
  } catch (error) {
    if (!/failed to read partition table/.test(errorText(error))) throw error;
  }
}

async function exists(path: string): Promise<boolean> {
  return access(path, constants.F_OK).then(
    () => true,
    () => false,
  );
}

/**
 * Powers the drive off: through udisks where it runs (it also cuts the USB port's power, what
 * desktops call "safely remove"), else by detaching a USB disk from the SCSI layer, which flushes
 * its cache first. A loop device has no hardware to power off, and a built-in card slot or an
 * internal disk cannot be: both resolve false, leaving the drive written, synced and in place.
 */
export async function ejectLinux(facts: DeviceFacts): Promise<boolean> {
  const dir = sysfsDir(facts.rdev);
  if (await exists(join(dir, 'loop'))) return false;
  const scsiDelete = join(dir, 'device', 'delete');
  const canDetach = (await realpath(dir).catch(() => '')).includes('/usb') && (await exists(scsiDelete));
  const udisksctl = await findTool('udisksctl');
  if (udisksctl !== null) {
    try {
      await runTool(udisksctl, [
        'power-off',
        '--block-device',
        await linuxDeviceNode(facts.rdev),
        '--no-user-interaction',
      ]);
      return true;
    } catch (error) {
      // udisksctl is installed but its daemon may not run (servers, containers): detach directly.
      if (!canDetach) throw error;
    }
  }
  if (!canDetach) return false;
  await writeFile(scsiDelete, '1');
  return true;
}
