import { readdir, readFile, realpath } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Drive } from '../../common/domain/drive.js';
import { runTool } from '../../node/run-tool.js';

/** Where Linux names each reader slot by its place on the bus: stable across cards and reboots. */
export const LINUX_SLOT_DIR = '/dev/disk/by-path';

/** What a station's row and log line say about the card in a slot. */
export interface DriveIdentity {
  /** The reader slot's stable name (a /dev/disk/by-path link; a loop device's backing file), or null when the OS gives none. */
  slot: string | null;
  model: string | null;
  serial: string | null;
}

/**
 * The stable name of the slot `device` sits in: the whole-disk link in `dir` that leads to it
 * (partitions' links end in -partN). A loop device's slot is the file behind it: what stays the
 * same when it is attached again, and what lets a test name the only "cards" its station may take
 * on a machine where other loop devices come and go. Only Linux has such names; elsewhere, and for
 * devices without one, null.
 */
export async function slotOf(device: string, dir = LINUX_SLOT_DIR): Promise<string | null> {
  const backing = await readFile(`/sys/block/${basename(device)}/loop/backing_file`, 'utf8').catch(() => null);
  if (backing !== null) return backing.trim();
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names.filter((n) => !/-part\d+$/.test(n)).sort()) {
    const path = join(dir, name);
    if ((await realpath(path).catch(() => null)) === device) return path;
  }
  return null;
}

/** lsblk's view of one device's model and serial number. */
interface LsblkIdentity {
  model: string | null;
  serial: string | null;
}

/**
 * The card's model and serial number (lsblk on Linux; elsewhere the listing's description, with
 * no serial), and its slot. A value the OS does not give is null: a log never invents one.
 */
export async function driveIdentity(drive: Drive): Promise<DriveIdentity> {
  const fallback = drive.description.trim() || null;
  if (process.platform !== 'linux') return { slot: null, model: fallback, serial: null };
  const [slot, listed] = await Promise.all([
    slotOf(drive.device),
    runTool('lsblk', ['--json', '--nodeps', '--output', 'MODEL,SERIAL', drive.device])
      .then((out) => (JSON.parse(out) as { blockdevices: LsblkIdentity[] }).blockdevices[0])
      .catch(() => undefined),
  ]);
  return { slot, model: listed?.model?.trim() || fallback, serial: listed?.serial?.trim() || null };
}
