import { ok, refuse, refused, type ApiResult } from '../../common/contracts/api-result.js';
import type { BackupRequest, JobEnd } from '../../common/contracts/app-models.js';
import { JobError } from '../../common/domain/failure.js';
import { checkBackup } from '../../user/backup/drive-backup.js';
import { startBackupSession, suggestedBackupName } from './backup-session.js';
import { shrinkRefusal } from '../../user/backup/shrink-refusal.js';
import type { DriveConfirmations } from './drive-confirmations.js';
import type { DriveListing } from './drive-listing.js';
import type { SessionDeps } from './flash-session.js';
import { checkSourceDrive } from './image-probe.js';
import type { JobRunner } from './job-runner.js';
import type { SettingsStore } from './settings-store.js';

/** Where the user chose to save a backup of which drive, as that drive was then. */
interface ChosenFile {
  device: string;
  path: string;
  compress: BackupRequest['compress'];
  /** A card swapped in the same reader is another drive: its size, name and medium (Drive.medium) are kept to tell. */
  size: number | null;
  description: string;
  medium: string | null;
}

/**
 * The backup's files: the one the save dialog returned (a backup writes there and nowhere else,
 * once) and the one the last backup saved and verified (the only path "Show in folder" opens).
 */
export class BackupFiles {
  private chosen: ChosenFile | null = null;
  private saved: string | null = null;

  constructor(
    private readonly runner: JobRunner,
    private readonly drives: DriveListing,
    private readonly confirmations: DriveConfirmations,
    private readonly settings: SettingsStore,
    private readonly desktop: {
      /** The native save dialog, offering `suggestedName`; null when the user closed it. */
      pickBackupFile(suggestedName: string): Promise<string | null>;
      /** Opens the file manager at a file. */
      showInFolder(path: string): void;
    },
  ) {}

  /** Opens the save dialog for a backup of `device`, after the checks that can be made before it. */
  async choose(device: string, compress: BackupRequest['compress']): Promise<ApiResult<string | null>> {
    const busy = this.runner.busy();
    if (busy !== null) return busy;
    const drive = await this.drives.find(device);
    if (!drive.ok) return drive;
    try {
      await checkSourceDrive(drive.value);
    } catch (error) {
      if (error instanceof JobError) return refused(error.failure);
      throw error;
    }
    const path = await this.desktop.pickBackupFile(suggestedBackupName(drive.value, compress, new Date()));
    this.chosen =
      path === null
        ? null
        : {
            device,
            path,
            compress,
            size: drive.value.size,
            description: drive.value.description,
            medium: drive.value.medium,
          };
    return ok(path);
  }

  /** Starts the backup `request` names, into the file chosen for it: the same backup `sluice backup` runs. */
  start(request: BackupRequest, session: SessionDeps): Promise<ApiResult<null>> {
    return this.runner.whileStarting(async () => {
      const busy = this.runner.busy();
      if (busy !== null) return busy;
      const chosen = this.chosen;
      if (
        chosen === null ||
        chosen.device !== request.device ||
        chosen.path !== request.file ||
        chosen.compress !== request.compress
      )
        return refuse('no-backup-file', 'Choose where to save the backup again.');
      // Before the typed name below is used up: a backup refused for its settings needs no second typing.
      const shrinkRefused = request.shrink === true ? await shrinkRefusal(request.compress !== null) : null;
      if (shrinkRefused !== null) return refuse('invalid-request', shrinkRefused);
      // The drive as listed now must be the one chosen; checkBackup below looks at it afresh.
      const drive = await this.drives.find(request.device);
      if (!drive.ok) return drive;
      if (
        drive.value.size !== chosen.size ||
        drive.value.description !== chosen.description ||
        drive.value.medium !== chosen.medium
      ) {
        this.chosen = null;
        return refuse(
          'unknown-drive',
          `${request.device} is not the drive that was chosen (another card in the same reader?). Choose Back up… on it again.`,
        );
      }
      // Reading a whole internal disk needs its name typed, as `sluice backup` asks at the terminal.
      const internal = drive.value.system === 'internal';
      const untyped = refuse(
        'target-system',
        `${request.device} is an internal disk of this computer: backing it up needs its name typed. Nothing was read.`,
      );
      if (internal && !this.confirmations.holds(drive.value)) return untyped;
      // The same checks `sluice backup` makes: the drive afresh, the file's path, the file not on the drive.
      const checked = await checkBackup(request.device, request.file);
      if ('refused' in checked) return refuse(checked.refused.code, checked.refused.message);
      const busyNow = this.runner.busy();
      if (busyNow !== null) return busyNow;
      // Used up only now, with no wait before the launch: a start refused above keeps the typed name.
      if (internal && !this.confirmations.take(drive.value)) return untyped;
      this.chosen = null;
      const settings = this.settings.get();
      const job = {
        drive: request.device,
        file: request.file,
        driveSize: checked.driveSize,
        driveMedium: chosen.medium,
        compress: request.compress,
        trimToPartitions: request.trimToPartitions,
        allBlocks: false,
        shrink: request.shrink === true,
        verify: settings.verify,
        notify: settings.notifications,
      };
      this.runner.run(startBackupSession(job, session));
      return ok(null);
    });
  }

  /** A job ended: a backup saved and verified is the file "Show in folder" may open. */
  ended(end: JobEnd): void {
    const [saved] = end.results;
    if (end.kind === 'backup' && saved?.status === 'ok') this.saved = saved.target;
  }

  show(): ApiResult<null> {
    if (this.saved === null) return refuse('no-backup-file', 'No backup has been saved yet.');
    this.desktop.showInFolder(this.saved);
    return ok(null);
  }
}
