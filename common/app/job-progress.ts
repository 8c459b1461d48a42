import type { Progress } from '../domain/progress.js';

/**
 * How far one target's job is, from 0 to 1. Writing (a backup: reading the drive) and reading back
 * move about the same bytes, so with verification each counts for half; syncing sits at the boundary.
 */
export function targetFraction(progress: Progress, verify: boolean): number | null {
  if (progress.bytesTotal === null || progress.bytesTotal === 0) return null;
  const phaseDone = Math.min(1, progress.bytesDone / progress.bytesTotal);
  const writingShare = verify ? 0.5 : 1;
  switch (progress.phase) {
    case 'downloading':
    case 'decompressing':
    case 'reading':
    case 'writing':
      return phaseDone * writingShare;
    case 'syncing':
      return writingShare;
    case 'verifying':
      return writingShare + phaseDone * (1 - writingShare);
    case 'repairing':
      // After a whole read-back: only a few blocks are left to do, whose own progress the phase shows.
      return 1;
  }
}

/** The whole job's fraction: the mean over its targets (one not yet reporting counts as 0). */
export function overallFraction(latest: readonly (Progress | undefined)[], verify: boolean): number | null {
  if (latest.length === 0) return null;
  let sum = 0;
  for (const progress of latest) {
    if (progress === undefined) continue;
    const fraction = targetFraction(progress, verify);
    if (fraction === null) return null;
    sum += fraction;
  }
  return sum / latest.length;
}
