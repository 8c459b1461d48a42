import type { ImageInfo } from '../../../common/domain/image.js';
import type { DriveInfo } from '../../../common/contracts/app-models.js';
import { formatBytes } from '../../../common/domain/units.js';
import { verdictEffect } from '../../../common/domain/verdict.js';
import { unbootableAsWritten } from '../../../common/domain/disc.js';
import { driveName } from '../labels.js';
import { WarningIcon } from './Icons.js';
import { Modal } from './Modal.js';
import { ErrorMessage } from './ErrorMessage.js';
import type { ApiResult } from '../../../common/contracts/api-result.js';
import type { CustomisationPreview } from '../../../common/contracts/customise.js';

interface ConfirmFlashProps {
  image: ImageInfo;
  targets: DriveInfo[];
  verify: boolean;
  /** What customising writes onto each card (issue 13), or why it cannot; null: not customised, undefined: still being worked out. */
  customisation?: ApiResult<CustomisationPreview> | null | undefined;
  onConfirm: () => void;
  onCancel: () => void;
}

/** The last stop before erasing: names every drive, and Cancel has the focus. */
export function ConfirmFlash({ image, targets, verify, customisation = null, onConfirm, onCancel }: ConfirmFlashProps) {
  const blocked = customisation === undefined || (customisation !== null && !customisation.ok);
  const warnings = targets.flatMap((t) => t.verdicts.filter((v) => verdictEffect(v) === 'warn'));
  const unbootable = unbootableAsWritten(image);
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
          <button type="button" className="button danger" onClick={onConfirm} disabled={blocked}>
            Erase and flash
          </button>
        </>
      }
    >
      <p>
        Everything on {targets.length === 1 ? 'this drive' : 'these drives'} will be erased and replaced with{' '}
        <strong>{image.name}</strong>
        {image.size === null ? '' : ` (${formatBytes(image.size)})`}:
      </p>
      <ul className="confirm-list">
        {targets.map((t) => (
          <li key={t.device}>
            <strong>{driveName(t)}</strong>{' '}
            <span className="muted">
              {[t.device, t.size === null ? null : formatBytes(t.size)].filter(Boolean).join(' · ')}
            </span>
          </li>
        ))}
      </ul>
      {unbootable !== null && (
        <p className="message warning" data-testid="confirm-unbootable">
          <WarningIcon />
          {unbootable} Write it as it is only for a virtual machine or a tool that reads the ISO from the drive.
          {image.disc?.kind !== 'not-bootable' &&
            ' To make a stick that boots, use the command line: sluice flash --iso-mode files (see docs/installers.md).'}
        </p>
      )}
      {warnings.map((warning) => (
        <p key={warning.message} className="message warning">
          <WarningIcon />
          {warning.message}
        </p>
      ))}
      {customisation === undefined && <p className="hint">Working out the customisation…</p>}
      {customisation?.ok === true && (
        <p data-testid="confirm-customisation">
          Then customised for {customisation.value.method}:{' '}
          {(customisation.value.files[0] ?? []).map((f) => f.name).join(', ')}
          {customisation.value.hostnames.some((h) => h !== null) &&
            ` (host ${customisation.value.hostnames.join(', ')})`}
          .
        </p>
      )}
      {customisation?.ok === false && <ErrorMessage error={customisation.error.message} />}
      {!verify && (
        <p className="message warning">Verification is off: Sluice will not read the drives back to check them.</p>
      )}
    </Modal>
  );
}
