import { useEffect, useRef } from 'react';
import { EXTERNAL_LINKS } from '../../../electron/common/links.js';
import { failureAdvice, failureHeadline, flashTone, type Tone } from '../../../electron/common/outcome.js';
import type { TargetResult } from '../../../worker/common/result.js';
import { formatBytes, formatDuration } from '../../../worker/common/units.js';
import type { FinishedFlash } from '../flow.js';
import { driveName } from '../labels.js';
import { CheckIcon, CrossIcon, StopIcon, WarningIcon } from './Icons.js';

interface EndScreenProps {
  finished: FinishedFlash;
  onFlashAnother: () => void;
  onFlashAgain: () => void;
  onOpenLink: (url: string) => void;
}

const HEADLINE: Readonly<Record<Tone, string>> = {
  success: 'Flash complete',
  unverified: 'Written, not verified',
  cancelled: 'Flash cancelled',
  failure: 'Flash failed',
};

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

function ResultRow({ result, name, onOpenLink }: { result: TargetResult; name: string; onOpenLink: (url: string) => void }) {
  switch (result.status) {
    case 'ok': {
      const speed = result.seconds > 0 ? ` · ${formatBytes(result.bytes / result.seconds)}/s average` : '';
      return (
        <li className="result ok">
          <strong>{name}</strong> <span className="muted">{result.target}</span>
          <p>
            {result.verified ? 'Written and verified' : 'Written, not verified'}: {formatBytes(result.bytes)} in {formatDuration(result.seconds)}
            {speed}
          </p>
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
          <p>Stopped after {formatBytes(result.bytes)}, before the drive was completely written and verified. Flash it again before using it.</p>
        </li>
      );
    case 'failed':
      return (
        <li className="result failed">
          <strong>{name}</strong> <span className="muted">{result.target}</span>
          <p className="failure-headline" data-testid="failure-headline">
            {failureHeadline(result)}
          </p>
          <p>{result.message}</p>
          {result.badBlocks !== undefined && result.badBlocks > 1 && <p>{result.badBlocks} blocks differ from the image.</p>}
          <p className="advice">{failureAdvice(result.code)}</p>
          {result.code === 'verify-mismatch' && (
            <button type="button" className="link-button" onClick={() => onOpenLink(EXTERNAL_LINKS.fakeCardTest)}>
              How to test a card for fake capacity (F3)
            </button>
          )}
        </li>
      );
  }
}

/** How the flash ended. Green only when every drive was written and verified. */
export function EndScreen({ finished, onFlashAnother, onFlashAgain, onOpenLink }: EndScreenProps) {
  const { end, targets, image } = finished;
  const tone = flashTone(end);
  const heading = useRef<HTMLHeadingElement>(null);
  // Move focus to the outcome so keyboard and screen-reader users land on it.
  useEffect(() => heading.current?.focus(), []);
  const nameOf = (device: string) => {
    const drive = targets.find((t) => t.device === device);
    return drive === undefined ? device : driveName(drive);
  };

  return (
    <section className={`end-screen tone-${tone}`} aria-labelledby="end-title" data-screen={tone}>
      <ToneIcon tone={tone} />
      <h2 id="end-title" ref={heading} tabIndex={-1}>
        {HEADLINE[tone]}
      </h2>
      <p className="summary">
        {image.name} · {formatDuration(end.seconds)}
        {tone === 'unverified' && ' · verification was turned off in Settings, so the drive was not read back'}
      </p>
      <ul className="results">
        {end.results.map((result) => (
          <ResultRow key={result.target} result={result} name={nameOf(result.target)} onOpenLink={onOpenLink} />
        ))}
      </ul>
      <div className="actions">
        <button type="button" className="button primary" onClick={onFlashAgain}>
          {tone === 'success' ? 'Flash another drive' : 'Try again'}
        </button>
        <button type="button" className="button" onClick={onFlashAnother}>
          Start over
        </button>
      </div>
    </section>
  );
}
