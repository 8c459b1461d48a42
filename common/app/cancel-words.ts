/** What a cancelled job leaves on its drive, by kind of job: the CLI's last line and the app's end screen say it. */
import type { AppJobKind } from '../contracts/app-models.js';
import { DRIVE_INCOMPLETE } from '../domain/result.js';

const UNCHANGED = 'The drive was only read: it is unchanged.';

/**
 * A job as its cancellation is worded: a job of the app, or the CLI's flash to, or verify of, a
 * regular file (`sluice flash IMAGE FILE`, `sluice verify IMAGE FILE`).
 */
export type CancelledJob = AppJobKind | 'flash-to-file' | 'verify-file';

/**
 * A flash, a clone or an erase stopped part way through writing; a backup and a comparison only
 * read the drive, and a check puts back every block it tests before it stops. A flash to a file
 * writes FILE.incomplete and deletes it when cancelled; FILE itself is replaced only by a verified
 * file (user/files/file-target.ts).
 */
const LEFT_BY_CANCEL: Readonly<Record<CancelledJob, string>> = {
  flash: DRIVE_INCOMPLETE,
  clone: `${DRIVE_INCOMPLETE} The source drive was only read: it is unchanged.`,
  erase: 'The drive was not completely erased; erase it again before using it.',
  backup: `${UNCHANGED} The incomplete backup file was deleted.`,
  verify: `${UNCHANGED} Nothing was written.`,
  check: 'Every block tested was put back.',
  'flash-to-file': 'The incomplete file was deleted; a file that already had this name is unchanged.',
  'verify-file': 'The file was only read: it is unchanged.',
};

/** The sentence after "cancelled" for a job of `kind`: the state of its drive (and of a backup's file), or of a flash's file. */
export function cancelledWords(kind: CancelledJob): string {
  return LEFT_BY_CANCEL[kind];
}
