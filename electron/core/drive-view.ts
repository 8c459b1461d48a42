import type { DriveInfo, Verdict } from '../common/models.js';
import type { ProbedImage } from './image-probe.js';
import type { ScannedDrive } from './scanned-drive.js';

/**
 * Beyond this a drive is more likely someone's backup disk than a card or a stick, so the picker
 * warns (Etcher draws the line at the same size).
 */
export const LARGE_DRIVE_BYTES = 128e9;

function isUnder(path: string, mountpoint: string): boolean {
  if (path === mountpoint) return true;
  const prefix = /[\\/]$/.test(mountpoint) ? mountpoint : `${mountpoint}/`;
  return path.startsWith(prefix);
}

/** The drive holding the image file: the one with the deepest mountpoint above it. */
export function sourceDevice(drives: readonly ScannedDrive[], imageRealPath: string): string | null {
  let best: { device: string; depth: number } | null = null;
  for (const drive of drives) {
    for (const mountpoint of drive.mountpoints) {
      if (isUnder(imageRealPath, mountpoint) && (best === null || mountpoint.length > best.depth)) best = { device: drive.device, depth: mountpoint.length };
    }
  }
  return best?.device ?? null;
}

export function driveVerdicts(drive: ScannedDrive, imageSize: number | null, holdsImage: boolean): Verdict[] {
  const verdicts: Verdict[] = [];
  if (imageSize !== null && drive.size !== null && imageSize > drive.size) verdicts.push('too-small');
  if (holdsImage) verdicts.push('source');
  if (drive.readOnly) verdicts.push('read-only');
  if (drive.system) verdicts.push('system');
  if (drive.size !== null && drive.size > LARGE_DRIVE_BYTES) verdicts.push('large');
  return verdicts;
}

function displayName(drive: ScannedDrive): string {
  if (drive.description !== '') return drive.description;
  return drive.bus === null ? 'Unnamed drive' : `Unnamed ${drive.bus} drive`;
}

/** The picker's view of the drives, with verdicts about the chosen image (none chosen: no size verdicts). */
export function toDriveInfos(drives: readonly ScannedDrive[], image: ProbedImage | null): DriveInfo[] {
  const source = image === null ? null : sourceDevice(drives, image.realPath);
  const imageSize = image?.info.uncompressedSize ?? null;
  return drives.map((drive) => ({
    device: drive.device,
    name: displayName(drive),
    size: drive.size,
    bus: drive.bus,
    removable: drive.removable,
    virtual: drive.virtual,
    readOnly: drive.readOnly,
    system: drive.system,
    mountpoints: drive.mountpoints,
    verdicts: driveVerdicts(drive, imageSize, drive.device === source),
  }));
}
