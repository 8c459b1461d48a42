/** The end of a backup in words, for the command line and the app alike. */
import type { BackupFigures } from '../domain/result.js';
import { formatBytes } from '../domain/units.js';

/** "Read 639 MB of the 4.29 GB drive; the file takes 640 MB on disk." and, shrunk, what it restores onto. */
export function backupFiguresText(figures: BackupFigures, bytes: number): string {
  const read = `Read ${formatBytes(figures.readBytes)} of the ${formatBytes(figures.driveBytes)} drive; the file takes ${formatBytes(figures.fileBytes)} on disk.`;
  if (figures.shrunkFrom === undefined) return read;
  return `${read} Shrunk from ${formatBytes(figures.shrunkFrom)} to ${formatBytes(bytes)}: it restores onto any card of at least ${formatBytes(bytes)}.`;
}
