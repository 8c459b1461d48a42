import { describe, expect, it } from 'vitest';
import { overallFraction, targetFraction } from '../../../common/app/job-progress.js';
import type { Progress } from '../../../common/domain/progress.js';
import type { JobEnd } from '../../../common/contracts/app-models.js';
import { failureAdvice, failureHeadline, jobTone, summarizeJob } from '../../../common/app/outcome.js';
import { type TargetResult } from '../../../common/domain/result.js';
import { FAILURE_CODES } from '../../../common/domain/failure.js';
import { progressLine } from '../../../cli/render.js';

const ok = (target: string, verified = true): TargetResult => ({
  status: 'ok',
  target,
  bytes: 100,
  written: true,
  verified,
  seconds: 2,
});
const failed = (target: string): TargetResult => ({
  status: 'failed',
  target,
  bytes: 40,
  code: 'verify-mismatch',
  message: 'differs',
  offset: 1234,
});
const cancelled = (target: string): TargetResult => ({ status: 'cancelled', target, bytes: 10 });
const end = (results: TargetResult[], verify = true, kind: JobEnd['kind'] = 'flash'): JobEnd => ({
  kind,
  results,
  verify,
  seconds: 3,
});

describe('the tone of an end screen', () => {
  it('is success (green) only when every drive was written and verified', () => {
    expect(jobTone(end([ok('/dev/sdb'), ok('/dev/sdc')]))).toBe('success');
  });

  it('is "unverified" when a drive was not read back', () => {
    expect(jobTone(end([ok('/dev/sdb', false)], false))).toBe('unverified');
    expect(jobTone(end([ok('/dev/sdb'), ok('/dev/sdc', false)]))).toBe('unverified');
  });

  it('is failure when any drive failed, even if others succeeded or were cancelled', () => {
    expect(jobTone(end([ok('/dev/sdb'), failed('/dev/sdc')]))).toBe('failure');
    expect(jobTone(end([cancelled('/dev/sdb'), failed('/dev/sdc')]))).toBe('failure');
  });

  it('is cancelled when a drive was cancelled and none failed', () => {
    expect(jobTone(end([ok('/dev/sdb'), cancelled('/dev/sdc')]))).toBe('cancelled');
  });

  it('is failure when there are no results at all', () => {
    expect(jobTone(end([]))).toBe('failure');
  });
});

describe('failure words', () => {
  it('name the offset of a verification mismatch and what it likely means', () => {
    expect(
      failureHeadline(
        { status: 'failed', target: '/dev/sdb', bytes: 0, code: 'verify-mismatch', message: '', offset: 31469625 },
        'flash',
      ),
    ).toBe('Verification failed at offset 31469625: the card may be counterfeit or failing.');
  });

  it('exist for every failure code, with advice, for a flash and for a backup', () => {
    for (const job of ['flash', 'backup'] as const) {
      for (const code of FAILURE_CODES) {
        expect(failureHeadline({ status: 'failed', target: 't', bytes: 0, code, message: '' }, job), code).not.toBe('');
        expect(failureAdvice(code, job), code).toMatch(/\.$/);
      }
    }
  });

  it('never blame the drive for what went wrong with a backup file, nor call it counterfeit', () => {
    const mismatch: TargetResult = {
      status: 'failed',
      target: '/home/u/sd.img',
      bytes: 0,
      code: 'verify-mismatch',
      message: '',
      offset: 4096,
    };
    expect(failureHeadline(mismatch, 'backup')).toBe('The backup differs from the drive at offset 4096.');
    for (const code of [
      'target-full',
      'write-error',
      'verify-mismatch',
      'helper-died',
      'internal',
      'target-read-only',
      'target-not-found',
      'permission-denied',
      'unsupported-format',
    ] as const) {
      const words = `${failureHeadline({ status: 'failed', target: 'f', bytes: 0, code, message: '' }, 'backup')} ${failureAdvice(code, 'backup')}`;
      expect(words, code).not.toMatch(/counterfeit|incomplete|flash it again|smaller than it claims|lock switch|--/i);
    }
    expect(failureAdvice('target-full', 'backup')).toContain('is full');
  });

  it('summarise a job for the notification', () => {
    expect(summarizeJob(end([ok('/dev/sdb')]))).toEqual({
      tone: 'success',
      title: 'Flash complete',
      body: 'The drive was written and verified.',
    });
    expect(summarizeJob(end([ok('/dev/sdb'), failed('/dev/sdc')])).body).toBe(
      '/dev/sdc: Verification failed at offset 1234: the card may be counterfeit or failing.',
    );
    expect(summarizeJob(end([ok('/b/sd.img.zst')], true, 'backup'))).toEqual({
      tone: 'success',
      title: 'Backup complete',
      body: 'Saved and verified: /b/sd.img.zst.',
    });
    expect(summarizeJob(end([cancelled('/b/sd.img')], true, 'backup'))).toMatchObject({
      tone: 'cancelled',
      title: 'Backup cancelled',
    });
    expect(summarizeJob(end([failed('/b/sd.img')], true, 'backup'))).toEqual({
      tone: 'failure',
      title: 'Backup failed',
      body: '/b/sd.img: The backup differs from the drive at offset 1234.',
    });
  });
});

describe('progress', () => {
  const report = (phase: Progress['phase'], bytesDone: number): Progress => ({
    phase,
    target: '/dev/sdb',
    bytesDone,
    bytesTotal: 100,
    speed: 1,
    eta: 1,
  });

  it('counts writing and reading back as halves when verifying', () => {
    expect(targetFraction(report('writing', 50), true)).toBe(0.25);
    expect(targetFraction(report('syncing', 100), true)).toBe(0.5);
    expect(targetFraction(report('verifying', 50), true)).toBe(0.75);
    expect(targetFraction(report('writing', 50), false)).toBe(0.5);
  });

  it('does not fall back while bad blocks are repaired after the read-back: the job stays at its end, the phase shows its own bytes', () => {
    expect(targetFraction(report('repairing', 10), true)).toBe(1);
    expect(progressLine(report('repairing', 10))).toMatch(/^Repairing +\[#{3}\.{27}\]  10%/);
  });

  it('averages over the targets, counting one not yet reporting as 0', () => {
    expect(overallFraction([report('verifying', 100), undefined], true)).toBe(0.5);
    expect(overallFraction([{ ...report('writing', 10), bytesTotal: null }], true)).toBeNull();
  });
});

describe('the end screen of a comparison (verify only)', () => {
  const compared = (skipped?: number): TargetResult => ({
    status: 'ok',
    target: '/dev/sdb',
    bytes: 100,
    written: false,
    verified: true,
    seconds: 1,
    ...(skipped === undefined ? {} : { skipped }),
  });

  it('claims every byte of the image only when nothing was left out', () => {
    expect(summarizeJob(end([compared()], true, 'verify')).body).toBe(
      'Every byte of the image was compared with the drive; nothing was written.',
    );
    const body = summarizeJob(end([compared(4096)], true, 'verify')).body;
    expect(body).not.toContain('Every byte of the image');
    expect(body).toContain('free space and unmapped ranges it leaves out were not');
  });
});
