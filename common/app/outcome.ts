/**
 * The words for how a job ended, written once for the end screens and the desktop notification.
 * Green is for one case only: every drive written and verified (a backup: the file saved and
 * read back).
 */
import type { TargetResult } from '../domain/result.js';
import { isJobFailureCode, type FailureCode, type JobFailureCode } from '../domain/failure.js';
import type { AppJobKind, JobEnd } from '../contracts/app-models.js';
import { formatBytes } from '../domain/units.js';
import { cancelledWords } from './cancel-words.js';

export type Tone = 'success' | 'unverified' | 'cancelled' | 'failure';

/** The worst outcome wins: one failed drive makes the whole job a failure. */
export function jobTone(end: JobEnd): Tone {
  const { results } = end;
  if (results.length === 0 || results.some((r) => r.status === 'failed')) return 'failure';
  if (results.some((r) => r.status === 'cancelled')) return 'cancelled';
  return results.every((r) => r.status === 'ok' && r.verified) ? 'success' : 'unverified';
}

interface FailureText {
  title: string;
  /** What to do about it. */
  advice: string;
}

const FAILURE_TEXT: Readonly<Record<JobFailureCode, FailureText>> = {
  'target-not-found': {
    title: 'Drive not found',
    advice: 'Check that the drive is still plugged in, then choose it again.',
  },
  'target-not-block-device': { title: 'Not a drive', advice: 'Choose a whole drive from the list.' },
  'target-is-partition': { title: 'That is a partition', advice: 'Choose the whole drive it belongs to.' },
  'target-too-small': { title: 'Drive too small', advice: 'Use a drive at least as large as the image.' },
  'target-read-only': {
    title: 'Drive is read-only',
    advice: 'If it is an SD card, slide its lock switch up and insert it again.',
  },
  'target-system': {
    title: 'System drive refused',
    advice: 'Sluice never overwrites the disk this computer runs from. Choose another drive.',
  },
  'target-is-source': {
    title: 'Drive holds the image',
    advice: 'Copy the image file to another drive (or this computer), choose it from there, then flash again.',
  },
  'target-mounted': {
    title: 'Drive in use',
    advice: 'Eject its volumes (or close what is using them), then try again.',
  },
  'target-busy': { title: 'Drive busy', advice: 'Another program has the drive open. Close it and try again.' },
  'target-no-direct-io': {
    title: 'Drive not supported',
    advice: 'This drive refuses direct writes. Try another card reader or port.',
  },
  'permission-denied': {
    title: 'Permission denied',
    advice: 'Writing a drive needs administrator rights. Try again and approve the request.',
  },
  'source-not-found': {
    title: 'Image not found',
    advice: 'Check that the image file is still where it was chosen, then choose it again.',
  },
  'source-corrupt': { title: 'Image damaged', advice: 'Download the image again: the file is damaged.' },
  'source-truncated': {
    title: 'Image incomplete',
    advice: 'The image ends early, probably an interrupted download. Download it again.',
  },
  'source-read-error': {
    title: 'Could not read the image',
    advice: 'Check that the image file is still there and readable, then try again.',
  },
  'source-checksum-mismatch': {
    title: 'Image checksum mismatch',
    advice: 'The image is not the one that was published. Download it again.',
  },
  'unsupported-format': {
    title: 'Format not supported',
    advice: 'Decompress the image first, or choose a raw .img or .iso.',
  },
  'target-full': {
    title: 'Drive full before the end',
    advice: 'The drive stopped taking data early: it may be smaller than it claims (a counterfeit). Use another drive.',
  },
  'target-unplugged': {
    title: 'Drive removed',
    advice: 'The drive went away while being written. Plug it in and flash it again: it is incomplete.',
  },
  'write-error': {
    title: 'Write failed',
    advice: 'The drive reported an error. Try another port or reader; if it happens again, the drive is failing.',
  },
  'verify-read-error': {
    title: 'Could not read the drive back',
    advice: 'The drive failed while being read. Try another port; if it happens again, the drive is failing.',
  },
  'verify-mismatch': {
    title: 'Verification failed',
    advice: 'The drive does not hold what was written to it. Use another drive, and test this one for fake capacity.',
  },
  'target-fake-capacity': {
    title: 'Fake capacity: the drive holds less than it claims',
    advice:
      'Data written past its real size is lost. Do not trust this drive with data: use another, and return this one if you can.',
  },
  'helper-died': { title: 'Writing stopped unexpectedly', advice: 'The drive is incomplete. Flash it again.' },
  'elevation-denied': {
    title: 'Administrator rights refused',
    advice: 'Nothing was written. Try again and approve the request.',
  },
  'protocol-error': {
    title: 'Internal error',
    advice: 'The drive may be incomplete. Flash it again; if this repeats, please report it.',
  },
  internal: {
    title: 'Internal error',
    advice: 'The drive may be incomplete. Flash it again; if this repeats, please report it.',
  },
};

/**
 * A backup only reads the drive: what goes wrong is reading it, or saving the file. Where the
 * flash's words would say the drive is damaged or counterfeit, these say what happened instead.
 */
const BACKUP_FAILURE_TEXT: Readonly<Partial<Record<JobFailureCode, FailureText>>> = {
  'target-system': {
    title: 'Running system refused',
    advice: 'Sluice does not back up the disk this computer runs from: its files change while they are read.',
  },
  'target-is-source': {
    title: 'Backup would be saved on the drive',
    advice: 'Save the backup on another drive: this one is unmounted while it is read.',
  },
  'target-not-block-device': {
    title: 'Cannot save there',
    advice: 'Choose a new file name, or an existing regular file to replace.',
  },
  // These come from the drive or from the file, whichever refused: the message above says which.
  'permission-denied': {
    title: 'Permission denied',
    advice:
      'Reading a whole drive needs administrator rights, and the backup needs a folder you may write to. See the message above.',
  },
  'target-not-found': {
    title: 'Not found',
    advice:
      'Check that the drive is still plugged in and that the folder chosen for the backup exists, then try again.',
  },
  'target-read-only': {
    title: 'Cannot save there',
    advice: 'The place chosen for the backup is read-only. Save it somewhere else.',
  },
  'unsupported-format': {
    title: 'Cannot make this backup',
    advice:
      'See the message above: back up the whole drive (leave "Stop after the last partition" unticked), or choose another format.',
  },
  'source-read-error': {
    title: 'Could not read the drive',
    advice: 'Check that the drive is still plugged in and try again; if it happens again, the drive is failing.',
  },
  'target-unplugged': {
    title: 'Drive removed',
    advice: 'The drive went away while it was read. Plug it in and back it up again.',
  },
  'target-full': {
    title: 'Not enough space for the backup',
    advice:
      'The disk the backup is saved on is full. Free some space, save it elsewhere, or choose a compressed format.',
  },
  'write-error': {
    title: 'Could not save the backup',
    advice: 'Writing the file failed. Save it on another disk and try again.',
  },
  'verify-read-error': {
    title: 'Could not read the backup back',
    advice: 'The saved file could not be read. Save it on another disk and try again.',
  },
  'verify-mismatch': {
    title: 'Backup does not match the drive',
    advice: 'The file differs from what was read. The disk it is saved on may be failing: save it on another disk.',
  },
  'helper-died': { title: 'Reading stopped unexpectedly', advice: 'Nothing was saved. Back the drive up again.' },
  'elevation-denied': {
    title: 'Administrator rights refused',
    advice: 'Nothing was read. Try again and approve the request.',
  },
  'protocol-error': {
    title: 'Internal error',
    advice: 'Nothing was saved. Back the drive up again; if this repeats, please report it.',
  },
  internal: {
    title: 'Internal error',
    advice: 'Nothing was saved. Back the drive up again; if this repeats, please report it.',
  },
};

function failureText(code: FailureCode, job: AppJobKind): FailureText {
  // A request's refusal is answered before any job runs; in a job's result it can only be a bug.
  const known = isJobFailureCode(code) ? code : 'internal';
  return (job === 'backup' ? BACKUP_FAILURE_TEXT[known] : undefined) ?? FAILURE_TEXT[known];
}

type FailedResult = Extract<TargetResult, { status: 'failed' }>;

/** The headline for one failed drive (or backup file); a verification mismatch names its exact offset. */
export function failureHeadline(result: FailedResult, job: AppJobKind): string {
  if (result.code === 'target-fake-capacity' && result.fakeCapacity !== undefined) {
    const { realBytes, claimedBytes } = result.fakeCapacity;
    return `Fake capacity: the drive holds about ${formatBytes(realBytes)}, not the ${formatBytes(claimedBytes)} it claims.`;
  }
  if (result.code === 'verify-mismatch' && result.offset !== undefined) {
    return job === 'backup'
      ? `The backup differs from the drive at offset ${result.offset}.`
      : `Verification failed at offset ${result.offset}: the card may be counterfeit or failing.`;
  }
  return failureText(result.code, job).title;
}

export function failureAdvice(code: FailureCode, job: AppJobKind): string {
  return failureText(code, job).advice;
}

/** One title and one sentence for the whole job, as a notification shows it. */
export function summarizeJob(end: JobEnd): { tone: Tone; title: string; body: string } {
  if (end.kind === 'check') return summarizeCheck(end);
  if (end.kind === 'erase') return summarizeErase(end);
  if (end.kind === 'verify') return summarizeVerify(end);
  return end.kind === 'backup' ? summarizeBackup(end) : summarizeWrite(end);
}

/** The first failure's target and headline; `none` when there are no results at all. */
function firstFailure(end: JobEnd, none: string): string {
  const first = end.results.find((r): r is FailedResult => r.status === 'failed');
  return first === undefined ? none : `${first.target}: ${failureHeadline(first, end.kind)}`;
}

function summarizeBackup(end: JobEnd): { tone: Tone; title: string; body: string } {
  const tone = jobTone(end);
  const file = end.results[0]?.target ?? '';
  switch (tone) {
    case 'success':
      return { tone, title: 'Backup complete', body: `Saved and verified: ${file}.` };
    case 'unverified':
      return {
        tone,
        title: 'Backup saved, not verified',
        body: `Saved as ${file}. Verification was turned off, so the file was not read back.`,
      };
    case 'cancelled':
      return {
        tone,
        title: 'Backup cancelled',
        body: 'The incomplete backup file was deleted; the drive is as it was.',
      };
    case 'failure':
      return { tone, title: 'Backup failed', body: firstFailure(end, 'Nothing was saved.') };
  }
}

function summarizeCheck(end: JobEnd): { tone: Tone; title: string; body: string } {
  const tone = jobTone(end);
  const drive = end.results[0]?.target ?? '';
  switch (tone) {
    case 'success':
    case 'unverified':
      return {
        tone,
        title: 'Card checked: it holds what it claims',
        body: `${drive} holds what it claims; every block tested was put back.`,
      };
    case 'cancelled':
      return { tone, title: 'Check cancelled', body: cancelledWords('check') };
    case 'failure': {
      const fake = end.results.some((r) => r.status === 'failed' && r.code === 'target-fake-capacity');
      return {
        tone,
        title: fake ? 'Fake capacity found' : 'Check failed',
        body: firstFailure(end, 'Nothing was checked.'),
      };
    }
  }
}

function summarizeVerify(end: JobEnd): { tone: Tone; title: string; body: string } {
  const tone = jobTone(end);
  switch (tone) {
    case 'success':
    case 'unverified':
      return {
        tone,
        title: 'The drive matches the image',
        // Compared under the flash's rule: what a flash leaves out is not read, and the rows say how much.
        body: end.results.some((r) => r.status === 'ok' && (r.skipped ?? 0) > 0)
          ? 'Every byte a flash writes was compared with the drive; the free space and unmapped ranges it leaves out were not (listed below). Nothing was written.'
          : 'Every byte of the image was compared with the drive; nothing was written.',
      };
    case 'cancelled':
      return { tone, title: 'Comparison cancelled', body: 'Nothing was written.' };
    case 'failure':
      return { tone, title: 'The drive differs from the image', body: firstFailure(end, 'Nothing was compared.') };
  }
}

function summarizeErase(end: JobEnd): { tone: Tone; title: string; body: string } {
  const tone = jobTone(end);
  switch (tone) {
    case 'success':
    case 'unverified':
      return {
        tone,
        title: 'Drive erased',
        body: 'It is a normal empty drive again: one partition, its tables written and read back.',
      };
    case 'cancelled':
      return {
        tone,
        title: 'Erase cancelled',
        body: cancelledWords('erase'),
      };
    case 'failure':
      return { tone, title: 'Erase failed', body: firstFailure(end, 'Nothing was written.') };
  }
}

function summarizeWrite(end: JobEnd): { tone: Tone; title: string; body: string } {
  const tone = jobTone(end);
  const drives = end.results.length === 1 ? 'The drive was' : `All ${end.results.length} drives were`;
  switch (tone) {
    case 'success':
      return { tone, title: 'Flash complete', body: `${drives} written and verified.` };
    case 'unverified':
      return {
        tone,
        title: 'Written, not verified',
        body: `${drives} written. Verification was turned off, so nothing was read back.`,
      };
    case 'cancelled':
      return {
        tone,
        title: 'Flash cancelled',
        body: 'The drive was not completely written and verified; flash it again before using it.',
      };
    case 'failure':
      return { tone, title: 'Flash failed', body: firstFailure(end, 'No drive was written.') };
  }
}
