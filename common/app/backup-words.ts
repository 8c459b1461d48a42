/** A backup's progress and end in words, for the command line and the app alike. */
import type { BackupProgress, Progress } from '../domain/progress.js';
import type { BackupFigures } from '../domain/result.js';
import { formatBytes } from '../domain/units.js';

/** What the read-back that passed did, on the CLI's last line and the app's end screen. */
export const BACKUP_CHECKED = 'read back and compared with what was read from the drive';

/**
 * What a backup's bytes so far are, against what: "Read 312 MB of 700 MB to read: the used blocks
 * of the 4.3 GB drive", "Read 1.2 GB of the 4.3 GB drive", "Read back 300 MB of 700 MB from the
 * file". Null for a phase a backup does not report. When nothing could be left out, what is read
 * is the whole drive after the tables and maps read to find that: more than the drive.
 */
export function backupProgressWords(p: Progress, backup: BackupProgress): string | null {
  const done = formatBytes(p.bytesDone);
  const total = formatBytes(p.bytesTotal ?? 0);
  const drive = formatBytes(backup.driveBytes);
  switch (p.phase) {
    case 'reading':
      if (p.bytesTotal === backup.driveBytes) return `Read ${done} of the ${drive} drive`;
      if ((p.bytesTotal ?? 0) > backup.driveBytes)
        return `Read ${done} of ${total} to read: the whole ${drive} drive, after its tables and filesystem maps`;
      if (p.bytesTotal === backup.imageBytes)
        return `Read ${done} of ${total} to read: the ${drive} drive up to its last partition`;
      return `Read ${done} of ${total} to read: the used blocks of the ${drive} drive`;
    case 'syncing':
      return `Read ${total} of the ${drive} drive; writing the file out`;
    case 'verifying':
      // A sparse file's holes are zeros by definition: they are checked as holes, not read.
      return `Read back ${done} of ${total} from the file${(p.bytesTotal ?? 0) < backup.imageBytes ? ' (its holes are free space, not read)' : ''}`;
    default:
      return null;
  }
}

/**
 * "Read 639 MB of the 4.3 GB drive (including 4.2 MB of tables and filesystem maps read to find what
 * is used). The image file is 4.3 GB long and takes 640 MB on disk.",
 * compressed "The 4.3 GB image compressed with zstd is a 210 MB file (210 MB on disk).", and,
 * shrunk, what it restores onto. `bytes`: the image's length.
 */
export function backupFiguresText(figures: BackupFigures, bytes: number): string {
  const maps =
    figures.mapBytes === 0
      ? ''
      : ` (including ${formatBytes(figures.mapBytes)} of tables and filesystem maps read to find what is used)`;
  const read = `Read ${formatBytes(figures.readBytes)} of the ${formatBytes(figures.driveBytes)} drive${maps}.`;
  const file =
    figures.compression === undefined
      ? `The image file is ${formatBytes(figures.fileLength)} long and takes ${formatBytes(figures.fileBytes)} on disk.`
      : `The ${formatBytes(bytes)} image compressed with ${figures.compression} is a ${formatBytes(figures.fileLength)} file (${formatBytes(figures.fileBytes)} on disk).`;
  if (figures.shrunkFrom === undefined) return `${read} ${file}`;
  return `${read} ${file} Shrunk from ${formatBytes(figures.shrunkFrom)} to ${formatBytes(bytes)}: it restores onto any card of at least ${formatBytes(bytes)}.`;
}
