/**
 * The typed confirmations of internal disks, kept by the core itself. The page sends what the
 * person typed for a drive; the core compares it with the name of the drive it listed and keeps
 * the drive, with the medium in it, as confirmed. A start (a flash, a backup) that would write or
 * read an internal disk the core saw no confirmation for is refused, whatever the page says, and a
 * job that starts uses its confirmation up: one typed name allows one job, so a name typed to back
 * a disk up does not allow flashing it later in the session. A start refused before its job exists
 * (its image cannot be opened, another target is refused, another job is running) leaves the name
 * typed, as nothing was touched: starts check with holds, and take only right before the launch,
 * with no wait between, so two starts on one typed name never both get a job.
 */
import { ok, refuse, type ApiResult } from '../../common/contracts/api-result.js';
import type { DriveConfirmation } from '../../common/contracts/app-models.js';
import { typedName } from '../../common/app/typed-name.js';
import type { Drive } from '../../common/domain/drive.js';
import type { DriveListing } from './drive-listing.js';

export class DriveConfirmations {
  /** Device → the medium it held when its name was typed. */
  private readonly confirmed = new Map<string, string | null>();

  constructor(private readonly drives: DriveListing) {}

  /** Keeps `request.device` as confirmed when what was typed is its name, for the medium the person saw in it. */
  async confirm(request: DriveConfirmation): Promise<ApiResult<null>> {
    const drive = await this.drives.find(request.device);
    if (!drive.ok) return drive;
    if (drive.value.medium !== request.medium)
      return refuse(
        'target-not-found',
        `${request.device} holds another medium than the one you chose. Choose it again.`,
      );
    if (drive.value.system !== 'internal')
      return refuse('invalid-request', `${request.device} is not an internal disk: it needs no typed name.`);
    const expected = typedName(request.device);
    if (request.typed !== expected)
      return refuse(
        'target-system',
        `What was typed is not ${expected}, the name of ${request.device}. Nothing was chosen.`,
      );
    this.confirmed.set(request.device, request.medium);
    return ok(null);
  }

  /** Whether the person typed the name of `drive`, an internal disk, with the medium it holds now. */
  holds(drive: Pick<Drive, 'device' | 'medium'>): boolean {
    return this.confirmed.has(drive.device) && this.confirmed.get(drive.device) === drive.medium;
  }

  /** As holds, and the confirmation is used up: called where the job starts, with no wait before it does. */
  take(drive: Pick<Drive, 'device' | 'medium'>): boolean {
    const confirmed = this.holds(drive);
    this.confirmed.delete(drive.device);
    return confirmed;
  }
}
