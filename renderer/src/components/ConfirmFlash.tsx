import type { ImageInfo } from '../../../common/domain/image.js';
import type { DriveInfo } from '../../../common/contracts/app-models.js';
import { formatBytes } from '../../../common/domain/units.js';
import { verdictEffect } from '../../../common/domain/verdict.js';
import { driveName } from '../labels.js';
import { WarningIcon } from './Icons.js';
import { Modal } from './Modal.js';

interface ConfirmFlashProps {
  image: ImageInfo;
  targets: DriveInfo[];
  verify: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}

/** The last stop before erasing: names every drive, and Cancel has the focus. */
export function ConfirmFlash({ image, targets, verify, onConfirm, onCancel }: ConfirmFlashProps) {
  const warnings = targets.flatMap((t) => t.verdicts.filter((v) => verdictEffect(v) === 'warn'));
  return (
    <Modal
      title={targets.length === 1 ? 'Erase this drive?' : `Erase these ${targets.length} drives?`}
      onClose={onCancel}
      className="confirm"
      footer={
        <>
          <button type="button" className="button" onClick={onCancel} autoFocus>
            Cancel
          </button>
          <button type="button" className="button danger" onClick={onConfirm}>
            Erase and flash
          </button>
        </>
      }
    >
      <p>
        Everything on {targets.length === 1 ? 'this drive' : 'these drives'} will be erased and replaced with <strong>{image.name}</strong>
        {image.size === null ? '' : ` (${formatBytes(image.size)})`}:
      </p>
      <ul className="confirm-list">
        {targets.map((t) => (
          <li key={t.device}>
            <strong>{driveName(t)}</strong> <span className="muted">{[t.device, t.size === null ? null : formatBytes(t.size)].filter(Boolean).join(' · ')}</span>
          </li>
        ))}
      </ul>
      {warnings.map((warning) => (
        <p key={warning.message} className="message warning">
          <WarningIcon />
          {warning.message}
        </p>
      ))}
      {!verify && <p className="message warning">Verification is off: Sluice will not read the drives back to check them.</p>}
    </Modal>
  );
}
