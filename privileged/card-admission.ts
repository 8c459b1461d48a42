/**
 * Root's own look at a card an armed station is asked to write, from /sys alone (Linux): the
 * unprivileged side judged it already (common/domain/station.ts admitDrive), and root judges it
 * again without believing a word of that. The drive's name, its medium's number, whether it is a
 * card, its size and its slot all come from the kernel here; no path the user gave is opened.
 */
import { readdir, readFile, realpath } from 'node:fs/promises';
import type { StationLimits } from '../node/helper-command-line.js';

const SYS_BLOCK = '/sys/block';
/** The only slot names root resolves: udev's, in a directory only root can change. */
const SLOT_DIR = '/dev/disk/by-path/';

/** A whole disk under its own name: what /sys/block lists. */
const DISK_NAME = /^\/dev\/([A-Za-z0-9][A-Za-z0-9_.-]{0,63})$/;

function sysText(name: string, file: string): Promise<string | null> {
  return readFile(`${SYS_BLOCK}/${name}/${file}`, 'utf8').then(
    (text) => text.trim(),
    () => null,
  );
}

/**
 * The highest disk sequence number of any medium present: every medium the kernel sees later (a
 * card inserted, a loop device attached, another card in the same reader) gets a higher one.
 * Null where the kernel numbers none (before Linux 5.15): then no card can be told new.
 */
export async function highestDiskSeq(): Promise<bigint | null> {
  const names = await readdir(SYS_BLOCK);
  let highest: bigint | null = null;
  for (const name of names) {
    const seq = await sysText(name, 'diskseq');
    if (seq === null || !/^\d+$/.test(seq)) continue;
    if (highest === null || BigInt(seq) > highest) highest = BigInt(seq);
  }
  return highest;
}

/** How the kernel attaches the disk: a loop device, an SD card, anything on USB, or a removable medium. */
async function cardKind(name: string): Promise<'loop' | 'card' | null> {
  if ((await sysText(name, 'loop/backing_file')) !== null) return 'loop';
  if (name.startsWith('mmcblk') && (await sysText(name, 'device/type')) === 'SD') return 'card';
  if ((await sysText(name, 'removable')) === '1') return 'card';
  const path = await realpath(`${SYS_BLOCK}/${name}`).catch(() => '');
  return /\/usb\d+\//.test(path) ? 'card' : null;
}

/** Whether the disk sits in one of `slots`: a udev by-path name that leads to it, or a loop device's backing file. */
async function inSlots(device: string, name: string, slots: readonly string[]): Promise<boolean> {
  const backing = await sysText(name, 'loop/backing_file');
  for (const slot of slots) {
    if (backing !== null && slot === backing) return true;
    if (slot.startsWith(SLOT_DIR) && !slot.slice(SLOT_DIR.length).includes('/')) {
      if ((await realpath(slot).catch(() => null)) === device) return true;
    }
  }
  return false;
}

export type CardAdmission = { admitted: true; medium: string } | { admitted: false; reason: string };

/**
 * Whether the station may write `device` now: a whole disk whose medium arrived after arming
 * (a disk sequence number above `armedAt`), a card (removable, USB or SD; a loop device only with
 * --virtual), within the size range, and in one of the slots when the station names any. The
 * medium admitted is returned, and the card's helper is held to it (--medium).
 */
export async function admitCard(device: string, limits: StationLimits, armedAt: bigint): Promise<CardAdmission> {
  const name = DISK_NAME.exec(device)?.[1];
  const refuse = (reason: string): CardAdmission => ({ admitted: false, reason: `${device} ${reason}` });
  if (name === undefined) return refuse('is not a disk named by the system');
  const seq = await sysText(name, 'diskseq');
  if (seq === null) return refuse('is not a whole disk the kernel numbers (no /sys/block entry with a diskseq)');
  if (!/^\d+$/.test(seq) || BigInt(seq) <= armedAt)
    return refuse(`holds a medium that was there before the station was armed (diskseq ${seq}, at most ${armedAt})`);
  const kind = await cardKind(name);
  if (kind === null || (kind === 'loop' && !limits.virtual)) return refuse('is not a removable, USB or SD drive');
  const sectors = await sysText(name, 'size');
  const size = Number(sectors) * 512;
  if (sectors === null || !Number.isSafeInteger(size) || size < limits.minSize || size > limits.maxSize)
    return refuse(`holds ${size} bytes, outside the station's range of ${limits.minSize} to ${limits.maxSize}`);
  if (limits.slots.length > 0 && !(await inSlots(device, name, limits.slots)))
    return refuse("is not in one of the station's slots");
  return { admitted: true, medium: seq };
}
