import { useEffect, useRef } from 'react';
import { EXTERNAL_LINKS } from '../../../common/app/links.js';
import type { AppJobKind } from '../../../common/contracts/app-models.js';
import { failureAdvice, failureHeadline, summarizeJob, type Tone } from '../../../common/app/outcome.js';
import { skippedLines } from '../../../common/app/skipped-words.js';
import { cancelledWords } from '../../../common/app/cancel-words.js';
import { BACKUP_CHECKED, backupFiguresText } from '../../../common/app/backup-words.js';
import { repairWords, type TargetResult } from '../../../common/domain/result.js';
import { formatBytes, formatDuration } from '../../../common/domain/units.js';
import { jobRows, type FinishedJob, type JobSubject } from '../flow.js';
import { driveName } from '../labels.js';
import { CheckIcon, CrossIcon, StopIcon, WarningIcon } from './Icons.js';

interface EndScreenProps {
  finished: FinishedJob;
  onFlashAnother: () => void;
  onFlashAgain: () => void;
  /** A backup's end screen: back to the steps as they were. */
  onDone: () => void;
  /** A saved backup: show the file in the system's file manager. */
  onShowFile: () => void;
  onOpenLink: (url: string) => void;
}

/** What each outcome says about the thing written: drives (a flash or a clone), or a backup's file. */
const WORDS: Readonly<
  Record<
    'write' | 'backup',
    { ok: string; unverified: string; stopped: (done: string) => string; differ: string; notReadBack: string }
  >
> = {
  write: {
    ok: 'Written and verified',
    unverified: 'Written, not verified',
    stopped: (done) =>
      `Stopped after ${done}, before the drive was completely written and verified. Flash it again before using it.`,
    differ: 'blocks differ from the image.',
    notReadBack: 'verification was turned off in Settings, so the drive was not read back',
  },
  backup: {
    ok: 'Saved and verified',
    unverified: 'Saved, not verified',
    stopped: (done) => `Stopped after ${done}. The incomplete backup file was deleted; the drive is as it was.`,
    differ: 'blocks differ from what was read from the drive.',
    notReadBack: 'verification was turned off in Settings, so the file was not read back',
  },
};

function wordsFor(kind: AppJobKind): (typeof WORDS)['write'] {
  return WORDS[kind === 'backup' ? 'backup' : 'write'];
}

/** A cancelled row: how far the job got, and the state it left the drive in (a backup: and its file). */
function stoppedWords(kind: AppJobKind, done: string): string {
  return kind === 'flash' || kind === 'backup'
    ? wordsFor(kind).stopped(done)
    : `Stopped after ${done}. ${cancelledWords(kind)}`;
}

/** What the job was about: the image written, or the drive backed up. */
function subjectName(subject: JobSubject): string {
  if (subject.kind === 'verify')
    return `${driveName(subject.drive)} (${subject.drive.device}) and ${subject.image.name}`;
  return subject.kind === 'backup' || subject.kind === 'check' || subject.kind === 'erase'
    ? `${driveName(subject.drive)} (${subject.drive.device})`
    : subject.image.name;
}

function ToneIcon({ tone }: { tone: Tone }) {
  switch (tone) {
    case 'success':
      return <CheckIcon className="end-icon" />;
    case 'unverified':
      return <WarningIcon className="end-icon" />;
    case 'cancelled':
      return <StopIcon className="end-icon" />;
    case 'failure':
      return <CrossIcon className="end-icon" />;
  }
}

type OkResult = Extract<TargetResult, { status: 'ok' }>;

/**
 * "Written and verified: 4.29 GB in 42 s · 102 MB/s average"; a backup's says how it was checked,
 * its figures (backup-words.ts) follow: its image's length and speed would not say what was read.
 */
function doneWords(result: OkResult, words: (typeof WORDS)['write']): string {
  if (result.backup !== undefined)
    return `${result.verified ? `${words.ok}: ${BACKUP_CHECKED}` : `${words.unverified}: ${words.notReadBack}`} (${formatDuration(result.seconds)}).`;
  const how =
    result.customised === true
      ? result.verified
        ? 'Written, verified and customised'
        : 'Written and customised, not verified'
      : result.verified
        ? words.ok
        : words.unverified;
  const speed = result.seconds > 0 ? ` · ${formatBytes(result.bytes / result.seconds)}/s average` : '';
  return `${how}: ${formatBytes(result.bytes)} in ${formatDuration(result.seconds)}${speed}`;
}

/** What a good end says for the jobs about one drive that write no image: a check, an erase, a comparison. */
const SINGLE_DRIVE_OK = {
  check: (r: OkResult) =>
    `It holds the ${formatBytes(r.bytes)} it claims: ${r.capacityCheck?.markers ?? 0} test blocks over the whole drive were written, read back and put back, in ${formatDuration(r.seconds)}.`,
  erase: (r: OkResult) =>
    `One empty partition: its tables (${formatBytes(r.bytes)}) written and read back in ${formatDuration(r.seconds)}; the rest of the drive is free space now.`,
  verify: (r: OkResult) =>
    `It holds the image: ${formatBytes(r.bytes)} compared in ${formatDuration(r.seconds)}, nothing written.`,
} as const;

function ResultRow({
  result,
  job,
  name,
  onOpenLink,
}: {
  result: TargetResult;
  job: AppJobKind;
  name: string;
  onOpenLink: (url: string) => void;
}) {
  const words = wordsFor(job);
  switch (result.status) {
    case 'ok': {
      const single = job === 'check' || job === 'erase' || job === 'verify' ? SINGLE_DRIVE_OK[job] : undefined;
      if (single !== undefined) {
        return (
          <li className="result ok">
            <strong>{name}</strong> <span className="muted">{result.target}</span>
            <p data-testid={`${job}-result`}>{single(result)}</p>
          </li>
        );
      }
      return (
        <li className="result ok">
          <strong>{name}</strong> <span className="muted">{result.target}</span>
          <p data-testid="result-done">{doneWords(result, words)}</p>
          {skippedLines(result.skipped, result.skippedFor ?? [], result.written ? 'written' : 'compared').map(
            (line) => (
              <p key={line} className="muted" data-testid="result-skipped">
                {line}
              </p>
            ),
          )}
          {result.repaired !== undefined && (
            <p data-testid="result-repaired">
              Verification found blocks that differed and Sluice {repairWords(result.repaired)}: written again from the
              image and read back right. If it happens again, the card may be failing.
            </p>
          )}
          {result.capacityCheck !== undefined && (
            <p className="muted" data-testid="result-capacity">
              Capacity checked: {result.capacityCheck.markers} test blocks past the image came back (
              {formatDuration(result.capacityCheck.seconds)}).
            </p>
          )}
          {result.backup !== undefined && (
            <p data-testid="result-backup">{backupFiguresText(result.backup, result.bytes)}</p>
          )}
          {result.ejected === true && <p>Ejected: you can remove it now.</p>}
          {/* After the image was safely written: worth saying, never a reason to call the flash failed. */}
          {result.warnings?.map((warning) => (
            <p key={warning} className="message warning" data-testid="result-warning">
              <WarningIcon />
              {warning}
            </p>
          ))}
        </li>
      );
    }
    case 'cancelled':
      return (
        <li className="result cancelled">
          <strong>{name}</strong> <span className="muted">{result.target}</span>
          <p>{stoppedWords(job, formatBytes(result.bytes))}</p>
        </li>
      );
    case 'failed':
      return (
        <li className="result failed">
          <strong>{name}</strong> <span className="muted">{result.target}</span>
          <p className="failure-headline" data-testid="failure-headline">
            {failureHeadline(result, job)}
          </p>
          <p>{result.message}</p>
          {result.badBlocks !== undefined && result.badBlocks > 1 && (
            <p>
              {result.badBlocks} {words.differ}
            </p>
          )}
          <p className="advice">{failureAdvice(result.code, job)}</p>
          {job !== 'backup' && result.code === 'verify-mismatch' && (
            <button type="button" className="link-button" onClick={() => onOpenLink(EXTERNAL_LINKS.fakeCardTest)}>
              How to test a card for fake capacity (F3)
            </button>
          )}
        </li>
      );
  }
}

/** How the job ended. Green only when every drive was written and verified (a backup: saved and read back). */
export function EndScreen({ finished, onFlashAnother, onFlashAgain, onDone, onShowFile, onOpenLink }: EndScreenProps) {
  const { end, subject } = finished;
  const { tone, title } = summarizeJob(end);
  const words = wordsFor(subject.kind);
  const heading = useRef<HTMLHeadingElement>(null);
  // Move focus to the outcome so keyboard and screen-reader users land on it.
  useEffect(() => heading.current?.focus(), []);
  // A refused backup reports on the drive, not the file.
  const rows =
    subject.kind === 'backup'
      ? [
          ...jobRows(subject),
          { key: subject.drive.device, name: driveName(subject.drive), detail: subject.drive.device },
        ]
      : jobRows(subject);
  const nameOf = (key: string) => rows.find((row) => row.key === key)?.name ?? key;

  return (
    <section className={`end-screen tone-${tone}`} aria-labelledby="end-title" data-screen={tone}>
      <ToneIcon tone={tone} />
      <h2 id="end-title" ref={heading} tabIndex={-1}>
        {title}
      </h2>
      <p className="summary">
        {subjectName(subject)} · {formatDuration(end.seconds)}
        {tone === 'unverified' && ` · ${words.notReadBack}`}
      </p>
      <ul className="results">
        {end.results.map((result) => (
          <ResultRow
            key={result.target}
            result={result}
            job={subject.kind}
            name={nameOf(result.target)}
            onOpenLink={onOpenLink}
          />
        ))}
      </ul>
      <div className="actions">
        {subject.kind === 'backup' ||
        subject.kind === 'check' ||
        subject.kind === 'erase' ||
        subject.kind === 'verify' ? (
          <>
            <button type="button" className="button primary" onClick={onDone}>
              Done
            </button>
            {subject.kind === 'backup' && end.results[0]?.status === 'ok' && (
              <button type="button" className="button" onClick={onShowFile}>
                Show in folder
              </button>
            )}
          </>
        ) : (
          <>
            <button type="button" className="button primary" onClick={onFlashAgain}>
              {tone === 'success' ? 'Flash another drive' : 'Try again'}
            </button>
            <button type="button" className="button" onClick={onFlashAnother}>
              Start over
            </button>
          </>
        )}
      </div>
    </section>
  );
}
