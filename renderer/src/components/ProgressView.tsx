import { overallFraction, targetFraction } from '../../../common/app/job-progress.js';
import { limitWords, waitWords } from '../../../common/app/bottleneck.js';
import type { Progress } from '../../../common/domain/progress.js';
import { formatBytes, formatDuration } from '../../../common/domain/units.js';
import { fileName, jobRows, type JobSubject, type RunningJob } from '../flow.js';
import { PHASE_LABEL } from '../../../common/app/phase-label.js';
import { backupProgressWords } from '../../../common/app/backup-words.js';
import { driveName } from '../labels.js';
import { WarningIcon } from './Icons.js';

function percent(fraction: number | null): string {
  return fraction === null ? '' : `${Math.floor(fraction * 100)}%`;
}

function phaseText(progress: Progress | undefined): string {
  return progress === undefined ? 'Starting' : PHASE_LABEL[progress.phase];
}

function rate(progress: Progress | undefined): string {
  if (progress === undefined) return '';
  const parts = [];
  if (progress.speed > 0) parts.push(`${formatBytes(progress.speed)}/s`);
  if (progress.eta !== null) parts.push(`${formatDuration(progress.eta)} left in this phase`);
  return parts.join(' · ');
}

/** "1.2 GB of 4.3 GB", or a backup's bytes read against the drive (backup-words.ts). */
function bytesWords(progress: Progress): string {
  const backup = progress.backup === undefined ? null : backupProgressWords(progress, progress.backup);
  if (backup !== null) return backup;
  return `${formatBytes(progress.bytesDone)}${progress.bytesTotal === null ? '' : ` of ${formatBytes(progress.bytesTotal)}`}`;
}

function Title({ subject }: { subject: JobSubject }) {
  if (subject.kind === 'verify') {
    return (
      <>
        Comparing <span className="chosen-name">{driveName(subject.drive)}</span> with{' '}
        <span className="chosen-name">{subject.image.name}</span>
      </>
    );
  }
  if (subject.kind === 'erase') {
    return (
      <>
        Erasing <span className="chosen-name">{driveName(subject.drive)}</span>
      </>
    );
  }
  if (subject.kind === 'check') {
    return (
      <>
        Checking <span className="chosen-name">{driveName(subject.drive)}</span> for fake capacity
      </>
    );
  }
  if (subject.kind !== 'backup') {
    return (
      <>
        Flashing <span className="chosen-name">{subject.image.name}</span>
      </>
    );
  }
  return (
    <>
      Backing up <span className="chosen-name">{driveName(subject.drive)}</span> to{' '}
      <span className="chosen-name">{fileName(subject.file)}</span>
    </>
  );
}

/** The running job: phase, overall percent, speed and time left, and a row per drive (or the backup file). */
export function ProgressView({ job, onCancel }: { job: RunningJob; onCancel: () => void }) {
  const rows = jobRows(job.subject);
  const reports = rows.map((row) => job.progress[row.key]);
  const fraction = overallFraction(reports, job.verify);
  // The slowest drive decides when the job ends, so the headline follows it.
  const lead = reports.reduce<Progress | undefined>((slowest, p) => {
    if (p === undefined) return slowest;
    if (slowest === undefined) return p;
    return (targetFraction(p, job.verify) ?? 0) < (targetFraction(slowest, job.verify) ?? 0) ? p : slowest;
  }, undefined);
  const phase = job.cancelling ? 'Cancelling' : phaseText(lead);

  return (
    <section className="progress-view" aria-labelledby="progress-title" data-screen="flashing">
      <h2 id="progress-title">
        <Title subject={job.subject} />
      </h2>
      <p className="phase" role="status" data-testid="phase">
        {phase}…
      </p>
      <div className="bar-row">
        <progress
          max={1}
          value={fraction ?? undefined}
          aria-label="Overall progress"
          aria-valuetext={percent(fraction)}
        />
        <span className="percent" data-testid="percent">
          {percent(fraction)}
        </span>
      </div>
      <p className="muted" data-testid="progress-bytes">
        {lead === undefined
          ? ((
              {
                check: 'Writing test blocks, reading them back, putting back what was there…',
                backup: 'Opening the drive…',
              } as Partial<Record<string, string>>
            )[job.subject.kind] ?? 'Preparing the drive…')
          : `${bytesWords(lead)} · ${rate(lead)}`}
      </p>
      <ul
        className="target-rows"
        aria-label={job.subject.kind === 'backup' ? 'Backup file' : job.subject.kind === 'check' ? 'Drive' : 'Drives'}
      >
        {rows.map((row) => {
          const p = job.progress[row.key];
          const f = p === undefined ? null : targetFraction(p, job.verify);
          return (
            <li key={row.key}>
              <span className="drive-name">{row.name}</span>
              <span className="muted">{row.detail}</span>
              <span>{phaseText(p)}</span>
              <span className="numeric">{percent(f)}</span>
            </li>
          );
        })}
      </ul>
      {lead?.limit !== undefined && !job.cancelling && (
        <p className="muted" data-testid="limit">
          Speed {limitWords(lead)}: {waitWords(lead)}
        </p>
      )}
      {job.download !== null && (
        <p className="muted" data-testid="download">
          Download: {formatBytes(job.download.bytesDone)}
          {job.download.bytesTotal === null ? '' : ` of ${formatBytes(job.download.bytesTotal)}`}
          {job.download.speed > 0 ? ` · ${formatBytes(job.download.speed)}/s` : ''}
          {job.download.notice === null ? '' : ` · ${job.download.notice}`}
        </p>
      )}
      {job.notice !== null && (
        <p className="message warning" role="status" data-testid="flash-notice">
          <WarningIcon />
          {job.notice}
        </p>
      )}
      <div className="actions">
        <button type="button" className="button" onClick={onCancel} disabled={job.cancelling}>
          {job.cancelling ? 'Cancelling…' : 'Cancel'}
        </button>
      </div>
    </section>
  );
}
