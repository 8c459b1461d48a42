/**
 * The safety verdicts for writing an image to a drive: one set of rules for the app, the CLI and
 * the helper's own re-check. The app and the CLI judge the Drive they listed; the helper judges
 * the facts it gathered itself (writer/target-check.ts) and never the app's drive object.
 */
import type { Drive } from './drive.js';
import type { Failure, FailureCode } from './failure.js';
import { formatBytes, GiB } from './units.js';

/**
 * Above this a drive earns the "is this really your SD card?" warning. Cards sold as "128 GB" hold
 * a little more or less than 128 × 10^9 bytes; 128 GiB (137.4 × 10^9) sits above every one of
 * them and below every "256 GB" card or disk.
 */
export const LARGE_DRIVE_BYTES = 128 * GiB;

/** What the rules look at; a listed Drive has all of it, and the helper builds it from its own inspection. */
export type SafetyFacts = Pick<Drive, 'device' | 'size' | 'readOnly' | 'system' | 'virtual' | 'mountpoints'>;

export interface ImageFacts {
  /** Bytes the image puts on the drive; null while unknown (a stream whose length shows only at its end). */
  size: number | null;
  /**
   * `size` is a lower bound, not the size: gzip's trailer gives the size modulo 4 GiB, so the
   * image holds that many bytes plus some multiple of 4 GiB. A drive smaller than it is still too small.
   */
  atLeast?: boolean;
  /** The device (as Drive.device) whose filesystem stores the image file; null when none of them does, or unknown. */
  storedOn: string | null;
  /** The image is that drive itself (a clone), not a file on it. */
  isDrive?: boolean;
}

export type Verdict =
  /** Holds the running system (refused), or is an internal disk (hidden; typed confirmation). */
  | { kind: 'system'; running: boolean; message: string }
  /** The image file lives on this drive: writing would destroy it while reading it. Refused. */
  | { kind: 'source'; message: string }
  | { kind: 'too-small'; imageSize: number; driveSize: number; message: string }
  | { kind: 'read-only'; message: string }
  /** Larger than LARGE_DRIVE_BYTES: a warning, since cards are rarely this big and disks often are. */
  | { kind: 'large'; driveSize: number; message: string }
  /** Has mounted filesystems, which Sluice unmounts before writing. */
  | { kind: 'mounted'; mountpoints: string[]; message: string }
  /** A loop device, RAM disk or disk image. Hidden unless "show virtual drives" is on. */
  | { kind: 'virtual'; message: string };

export type VerdictKind = Verdict['kind'];

/**
 * What a verdict means for the user: `refuse` (cannot be selected), `confirm-by-name` (selectable
 * only after typing the drive's name), `warn` (say it before writing), `note` (say it, nothing more).
 */
export type VerdictEffect = 'refuse' | 'confirm-by-name' | 'warn' | 'note';

export function verdictEffect(verdict: Verdict): VerdictEffect {
  switch (verdict.kind) {
    case 'system':
      return verdict.running ? 'refuse' : 'confirm-by-name';
    case 'source':
    case 'too-small':
    case 'read-only':
      return 'refuse';
    case 'large':
      return 'warn';
    case 'mounted':
    case 'virtual':
      return 'note';
  }
}

/**
 * Every verdict on writing `image` (null: no image chosen yet) to `drive`, most serious first:
 * refusals, then the typed confirmation, then warnings, then notes.
 */
export function judgeDrive(drive: SafetyFacts, image: ImageFacts | null): Verdict[] {
  const { device } = drive;
  const size = drive.size ?? 0;
  const verdicts: Verdict[] = [];
  if (drive.system === 'running') {
    const where = drive.mountpoints.length > 0 ? ` (${drive.mountpoints.join(', ')})` : '';
    verdicts.push({
      kind: 'system',
      running: true,
      message: `${device} holds the running system${where}. Sluice will not overwrite it.`,
    });
  }
  if (image?.storedOn === device) {
    const message =
      image.isDrive === true
        ? `${device} is the drive being copied; choose another drive to write to.`
        : `The image file is stored on ${device}: writing it would destroy the image while reading it. Copy the image to another drive first.`;
    verdicts.push({ kind: 'source', message });
  }
  if (image !== null && image.size !== null && image.size > size) {
    verdicts.push({
      kind: 'too-small',
      imageSize: image.size,
      driveSize: size,
      message: `${device} is too small: the image needs ${image.atLeast === true ? 'at least ' : ''}${formatBytes(image.size)} (${image.size} bytes), the drive has ${formatBytes(size)} (${size} bytes).`,
    });
  }
  if (drive.readOnly) {
    verdicts.push({
      kind: 'read-only',
      message: `${device} is read-only. If it is an SD card, slide its lock switch up and reinsert it.`,
    });
  }
  if (drive.system === 'internal') {
    verdicts.push({
      kind: 'system',
      running: false,
      message: `${device} is an internal disk of this computer. To erase it anyway, type its name to confirm.`,
    });
  }
  if (size > LARGE_DRIVE_BYTES) {
    verdicts.push({
      kind: 'large',
      driveSize: size,
      message: `${device} holds ${formatBytes(size)}, more than SD cards and USB sticks usually do. Is this really the drive you mean?`,
    });
  }
  // The running system's mounts are the reason it is refused, not something Sluice would unmount.
  if (drive.mountpoints.length > 0 && drive.system !== 'running') {
    verdicts.push({
      kind: 'mounted',
      mountpoints: [...drive.mountpoints],
      message: `${device} is mounted at ${drive.mountpoints.join(', ')}; Sluice unmounts it before writing.`,
    });
  }
  if (drive.virtual) {
    verdicts.push({
      kind: 'virtual',
      message: `${device} is a virtual drive (a loop device, RAM disk or disk image), not a card or stick.`,
    });
  }
  return verdicts;
}

/** The verdicts that can stand between a drive and a write, and the failure code each becomes. */
const REFUSAL_CODE = {
  system: 'target-system',
  source: 'target-is-source',
  'too-small': 'target-too-small',
  'read-only': 'target-read-only',
} as const satisfies Record<string, FailureCode>;

export type RefusingVerdict = Extract<Verdict, { kind: keyof typeof REFUSAL_CODE }>;

function canRefuse(verdict: Verdict): verdict is RefusingVerdict {
  return verdict.kind in REFUSAL_CODE;
}

/** The verdict that forbids the write, if any. */
export function refusalOf(verdicts: readonly Verdict[]): RefusingVerdict | undefined {
  return verdicts.find((v): v is RefusingVerdict => canRefuse(v) && verdictEffect(v) === 'refuse');
}

/**
 * A refusing verdict as the failure a job reports, so the app, the CLI and the helper give the
 * same code and sentence. An internal disk the user did not confirm by name becomes target-system.
 */
export function refusalFailure(verdict: RefusingVerdict): Failure {
  return { code: REFUSAL_CODE[verdict.kind], message: verdict.message };
}

/** Which drives a list shows. */
export interface DriveVisibility {
  /** "Show all drives": system disks too (the running one still refused). Implies virtual drives. */
  showAll: boolean;
  /** "Show virtual drives": loop devices, RAM disks, disk images. */
  showVirtual: boolean;
}

export function isDriveShown(drive: SafetyFacts, visibility: DriveVisibility): boolean {
  if (visibility.showAll) return true;
  return drive.system === null && (!drive.virtual || visibility.showVirtual);
}

function isWindowsPath(path: string): boolean {
  return /^[A-Za-z]:[\\/]/.test(path);
}

/** Whether `path` is `mountpoint` or inside it; Windows paths compare without case and with either slash. */
function isUnder(path: string, mountpoint: string): boolean {
  const windows = isWindowsPath(mountpoint);
  const norm = (p: string) => (windows ? p.replace(/\//g, '\\').toLowerCase() : p);
  const p = norm(path);
  const m = norm(mountpoint);
  const separator = windows ? '\\' : '/';
  if (m.endsWith(separator)) return p.startsWith(m);
  return p === m || p.startsWith(m + separator);
}

/**
 * The drive whose filesystem stores the file at `imagePath` (absolute, symlinks already resolved):
 * the one with the longest mountpoint containing it, so /media/card wins over /.
 */
export function findImageDrive(
  imagePath: string,
  drives: readonly Pick<Drive, 'device' | 'mountpoints'>[],
): string | null {
  let best: { device: string; length: number } | null = null;
  for (const drive of drives) {
    for (const mountpoint of drive.mountpoints) {
      if (isUnder(imagePath, mountpoint) && (best === null || mountpoint.length > best.length)) {
        best = { device: drive.device, length: mountpoint.length };
      }
    }
  }
  return best?.device ?? null;
}
