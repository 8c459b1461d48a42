/**
 * macOS: what happens to a disk around a write, through diskutil (DiskArbitration). Unmounting
 * asks every volume's users first; one that refuses is named by diskutil as the "dissenter".
 */
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { jobError } from '../../common/domain/failure.js';
import { runTool } from '../../node/run-tool.js';
import { NOTHING_HELD, type DeviceFacts, type VolumeHold } from './types.js';
import { errorText } from '../../common/domain/error-details.js';

/** The process that refused an unmount, as diskutil names it. */
export interface Dissenter {
  pid: number;
  /** The program's file name ("mds_stores"), from the path diskutil prints. */
  program: string;
}

/**
 * Finds the dissenter in diskutil's words. Two forms occur:
 *   Unmount was dissented by PID 319 (/System/Library/.../mds_stores).
 *   Dissenter PID=1234 (ProcessName) status=0x0000c010 (kDAReturnBusy)
 * The "Dissenter parent PPID 1 (/sbin/launchd)" line that may follow is the parent, not the culprit.
 */
export function parseDissenter(text: string): Dissenter | null {
  const match =
    /Unmount was dissented by PID (\d+)(?: \(([^\n]*?)\)\.?$)?/m.exec(text) ??
    /Dissenter PID=(\d+)(?: \(([^)]*)\))?/.exec(text);
  if (match?.[1] === undefined) return null;
  return { pid: Number(match[1]), program: match[2] === undefined ? 'another program' : basename(match[2]) };
}

/** What to tell the user when `diskutil unmountDisk` said no. */
export function darwinBusyMessage(facts: DeviceFacts, diskutilSaid: string): string {
  const where =
    facts.mountpoints.length > 0 ? `${facts.mountpoints.join(', ')} (on ${facts.path})` : `A volume on ${facts.path}`;
  const dissenter = parseDissenter(diskutilSaid);
  if (dissenter !== null) {
    return `${where} could not be unmounted: ${dissenter.program} (pid ${dissenter.pid}) is using it. Quit it (or close its files there), then try again. Nothing was written.`;
  }
  return `${where} could not be unmounted: ${diskutilSaid}. Close whatever uses it, then try again. Nothing was written.`;
}

/**
 * The whole-disk node diskutil is run on (/dev/diskN for /dev/rdiskN too), once the raw node that
 * was inspected is checked to be that device still: never a name that could now lead elsewhere.
 */
export async function darwinDiskNode(facts: DeviceFacts): Promise<string> {
  const now = await stat(facts.rawPath).catch(() => null);
  if (now === null || now.rdev !== facts.rdev)
    throw jobError('target-not-found', `${facts.path} is not the drive that was checked any more: was it unplugged?`);
  return facts.rawPath.replace(/^\/dev\/rdisk/, '/dev/disk');
}

/**
 * Always the whole disk, even when `diskutil list -plist` showed no mountpoint: a physical disk's
 * APFS container volumes are listed under the synthesized container disk, not under it, and would
 * otherwise stay mounted while the disk is written.
 */
export async function unmountDarwin(facts: DeviceFacts): Promise<VolumeHold> {
  const node = await darwinDiskNode(facts);
  try {
    await runTool('diskutil', ['unmountDisk', node]);
  } catch (error) {
    throw jobError('target-busy', darwinBusyMessage(facts, errorText(error)));
  }
  return NOTHING_HELD;
}

/**
 * Nothing to do: IOKit re-probes a disk's partitions when the last writer closes it, and
 * DiskArbitration then mounts what it recognises (or asks about what it does not: the familiar
 * "not readable" dialog after writing a Linux image).
 */
export function rereadPartitionsDarwin(): Promise<void> {
  return Promise.resolve();
}

/** `diskutil eject` unmounts whatever was mounted after the write, then ejects the medium. */
export async function ejectDarwin(facts: DeviceFacts): Promise<boolean> {
  await runTool('diskutil', ['eject', await darwinDiskNode(facts)]);
  return true;
}
