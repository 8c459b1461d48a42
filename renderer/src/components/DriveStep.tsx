import type { DriveInfo } from '../../../common/contracts/app-models.js';
import { formatBytes } from '../../../common/domain/units.js';
import { driveName } from '../labels.js';
import { DriveIcon } from './Icons.js';
import { StepCard } from './StepCard.js';

interface DriveStepProps {
  selected: DriveInfo[];
  available: number;
  notice: string | null;
  onOpenPicker: () => void;
}

/** Step 2: the chosen drives, and the button that opens the picker. */
export function DriveStep({ selected, available, notice, onOpenPicker }: DriveStepProps) {
  return (
    <StepCard number={2} title="Target" icon={<DriveIcon className="step-icon" />} done={selected.length > 0}>
      {selected.length === 0 ? (
        <>
          <button type="button" className="button primary" onClick={onOpenPicker}>
            Select target…
          </button>
          <p className="hint">
            {available === 0
              ? 'No drives found: plug in an SD card or a USB drive.'
              : `${available} drive${available === 1 ? '' : 's'} available`}
          </p>
        </>
      ) : (
        <>
          <ul className="chosen-drives" aria-label="Chosen drives">
            {selected.map((drive) => (
              <li key={drive.device}>
                <span className="chosen-name">{driveName(drive)}</span>
                <span className="muted">
                  {drive.device}
                  {drive.size === null ? '' : ` · ${formatBytes(drive.size)}`}
                </span>
              </li>
            ))}
          </ul>
          <div className="actions">
            <button type="button" className="button" onClick={onOpenPicker}>
              Change…
            </button>
          </div>
        </>
      )}
      <p className="message notice" role="status">
        {notice}
      </p>
    </StepCard>
  );
}
