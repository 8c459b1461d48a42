import type { Drive } from '../../common/domain/drive.js';
import { compressionSuffix } from '../../user/backup/compressor.js';
import { backupDrive, type BackupOptions } from '../../user/backup/drive-backup.js';
import { targetFraction } from '../../common/app/job-progress.js';
import { runDesktopJob, type JobSession } from './desktop-job.js';
import type { SessionDeps } from './flash-session.js';

export interface BackupSessionJob extends BackupOptions {
  /** From checkBackup, just before. */
  driveSize: number;
  driveMedium: string | null;
  notify: boolean;
}

/** Runs one backup (the same one `sluice backup` runs) with the desktop effects around it. */
export function startBackupSession(job: BackupSessionJob, deps: SessionDeps): JobSession {
  const controller = new AbortController();
  const save = async () => [
    await backupDrive({
      ...job,
      launch: deps.launch,
      signal: controller.signal,
      onProgress: (progress) => {
        deps.onProgress(progress);
        deps.effects.setProgress(targetFraction(progress, job.verify));
      },
    }),
  ];
  return {
    kind: 'backup',
    cancel: () => controller.abort(),
    done: runDesktopJob({ kind: 'backup', verify: job.verify, notify: job.notify }, deps.effects, save),
  };
}

/** The name the save dialog suggests: what the drive is, the day, and the suffix of the compression ("SanDisk-Ultra-2026-11-22.img.zst"). */
export function suggestedBackupName(
  drive: Pick<Drive, 'description'>,
  compress: BackupOptions['compress'],
  today: Date,
): string {
  const name =
    drive.description
      .replace(/[^\p{L}\p{N}._-]+/gu, '-')
      .replace(/^[-.]+|-+$/g, '')
      .slice(0, 64) || 'drive';
  const day = `${today.getFullYear()}-${String(today.getMonth() + 1).padStart(2, '0')}-${String(today.getDate()).padStart(2, '0')}`;
  return `${name}-${day}.img${compress === null ? '' : compressionSuffix(compress)}`;
}
