/**
 * The words for how a flash ended, written once for the end screens and the desktop notification.
 * Green is for one case only: every drive written and verified.
 */
import type { FailureCode, TargetResult } from '../../worker/common/result.js';
import type { FlashEnd } from './models.js';

export type Tone = 'success' | 'unverified' | 'cancelled' | 'failure';

/** The worst outcome wins: one failed drive makes the whole job a failure. */
export function flashTone(end: FlashEnd): Tone {
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

const FAILURE_TEXT: Readonly<Record<FailureCode, FailureText>> = {
  'target-not-found': { title: 'Drive not found', advice: 'Check that the drive is still plugged in, then choose it again.' },
  'target-not-block-device': { title: 'Not a drive', advice: 'Choose a whole drive from the list.' },
  'target-is-partition': { title: 'That is a partition', advice: 'Choose the whole drive it belongs to.' },
  'target-too-small': { title: 'Drive too small', advice: 'Use a drive at least as large as the image.' },
  'target-read-only': { title: 'Drive is read-only', advice: 'If it is an SD card, slide its lock switch up and insert it again.' },
  'target-system': { title: 'System drive refused', advice: 'Sluice never overwrites the disk this computer runs from. Choose another drive.' },
  'target-is-source': { title: 'Drive holds the image', advice: 'Copy the image file to another drive (or this computer), choose it from there, then flash again.' },
  'target-mounted': { title: 'Drive in use', advice: 'Eject its volumes (or close what is using them), then try again.' },
  'target-busy': { title: 'Drive busy', advice: 'Another program has the drive open. Close it and try again.' },
  'target-no-direct-io': { title: 'Drive not supported', advice: 'This drive refuses direct writes. Try another card reader or port.' },
  'permission-denied': { title: 'Permission denied', advice: 'Writing a drive needs administrator rights. Try again and approve the request.' },
  'source-corrupt': { title: 'Image damaged', advice: 'Download the image again: the file is damaged.' },
  'source-truncated': { title: 'Image incomplete', advice: 'The image ends early, probably an interrupted download. Download it again.' },
  'source-read-error': { title: 'Could not read the image', advice: 'Check that the image file is still there and readable, then try again.' },
  'source-checksum-mismatch': { title: 'Image checksum mismatch', advice: 'The image is not the one that was published. Download it again.' },
  'unsupported-format': { title: 'Format not supported', advice: 'Decompress the image first, or choose a raw .img or .iso.' },
  'target-full': {
    title: 'Drive full before the end',
    advice: 'The drive stopped taking data early: it may be smaller than it claims (a counterfeit). Use another drive.',
  },
  'target-unplugged': { title: 'Drive removed', advice: 'The drive went away while being written. Plug it in and flash it again: it is incomplete.' },
  'write-error': { title: 'Write failed', advice: 'The drive reported an error. Try another port or reader; if it happens again, the drive is failing.' },
  'verify-read-error': { title: 'Could not read the drive back', advice: 'The drive failed while being read. Try another port; if it happens again, the drive is failing.' },
  'verify-mismatch': { title: 'Verification failed', advice: 'The drive does not hold what was written to it. Use another drive, and test this one for fake capacity.' },
  'helper-died': { title: 'Writing stopped unexpectedly', advice: 'The drive is incomplete. Flash it again.' },
  'elevation-denied': { title: 'Administrator rights refused', advice: 'Nothing was written. Try again and approve the request.' },
  'protocol-error': { title: 'Internal error', advice: 'The drive may be incomplete. Flash it again; if this repeats, please report it.' },
  internal: { title: 'Internal error', advice: 'The drive may be incomplete. Flash it again; if this repeats, please report it.' },
};

type FailedResult = Extract<TargetResult, { status: 'failed' }>;

/** The headline for one failed drive; a verification mismatch names its exact offset. */
export function failureHeadline(result: FailedResult): string {
  if (result.code === 'verify-mismatch' && result.offset !== undefined) {
    return `Verification failed at offset ${result.offset}: the card may be counterfeit or failing.`;
  }
  return FAILURE_TEXT[result.code].title;
}

export function failureAdvice(code: FailureCode): string {
  return FAILURE_TEXT[code].advice;
}

/** One title and one sentence for the whole job, as a notification shows it. */
export function summarizeFlash(end: FlashEnd): { tone: Tone; title: string; body: string } {
  const tone = flashTone(end);
  const drives = end.results.length === 1 ? 'The drive was' : `All ${end.results.length} drives were`;
  switch (tone) {
    case 'success':
      return { tone, title: 'Flash complete', body: `${drives} written and verified.` };
    case 'unverified':
      return { tone, title: 'Written, not verified', body: `${drives} written. Verification was turned off, so nothing was read back.` };
    case 'cancelled':
      return { tone, title: 'Flash cancelled', body: 'The drive was not completely written and verified; flash it again before using it.' };
    case 'failure': {
      const failed = end.results.filter((r): r is FailedResult => r.status === 'failed');
      const first = failed[0];
      return { tone, title: 'Flash failed', body: first === undefined ? 'No drive was written.' : `${first.target}: ${failureHeadline(first)}` };
    }
  }
}
