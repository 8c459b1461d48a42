import { FlashIcon } from './Icons.js';
import { StepCard } from './StepCard.js';
import { ErrorMessage } from './ErrorMessage.js';

interface FlashStepProps {
  ready: boolean;
  verify: boolean;
  error: string | null;
  onFlash: () => void;
  onOpenSettings: () => void;
}

/** Step 3: the button that leads to the erase confirmation. */
export function FlashStep({ ready, verify, error, onFlash, onOpenSettings }: FlashStepProps) {
  return (
    <StepCard number={3} title="Flash" icon={<FlashIcon className="step-icon" />} done={false} disabled={!ready}>
      <button
        type="button"
        className="button primary"
        onClick={onFlash}
        disabled={!ready}
        aria-describedby="flash-hint"
      >
        Flash!
      </button>
      <p className="hint" id="flash-hint">
        {ready
          ? verify
            ? 'Writes, then reads every byte back to check it.'
            : 'Verification is off: the drive will not be read back.'
          : 'Choose an image and a drive first.'}{' '}
        {ready && (
          <button type="button" className="link-button" onClick={onOpenSettings}>
            Settings
          </button>
        )}
      </p>
      <ErrorMessage error={error} />
    </StepCard>
  );
}
