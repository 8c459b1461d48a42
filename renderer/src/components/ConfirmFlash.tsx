import { useState } from 'react';
import type { ImageInfo } from '../../../common/domain/image.js';
import type { DriveInfo } from '../../../common/contracts/app-models.js';
import { formatBytes } from '../../../common/domain/units.js';
import { verdictEffect } from '../../../common/domain/verdict.js';
import { unbootableAsWritten } from '../../../common/domain/disc.js';
import { driveName } from '../labels.js';
import { WarningIcon } from './Icons.js';
import { CancelOk, Modal } from './Modal.js';
import { ErrorMessage } from './ErrorMessage.js';
import type { ApiResult } from '../../../common/contracts/api-result.js';
import type { CustomisationPreview } from '../../../common/contracts/customise.js';

/** How an ISO is written: an installer stick of its files, or byte for byte. */
export type IsoMode = 'files' | 'image';

/** The choice offered for an ISO that will not boot written as it is, but whose files make a stick that does. */
function IsoModeChoice({ windows, mode, onMode }: { windows: boolean; mode: IsoMode; onMode: (m: IsoMode) => void }) {
  return (
    <fieldset className="iso-mode" data-testid="iso-mode">
      <legend>How to write this ISO</legend>
      <label>
        <input type="radio" name="iso-mode" checked={mode === 'files'} onChange={() => onMode('files')} /> Make an
        installer stick from its files: one FAT32 partition that boots under UEFI
        {windows ? ', install.wim split into parts if it is over 4 GiB' : ''}
      </label>
      <label>
        <input type="radio" name="iso-mode" checked={mode === 'image'} onChange={() => onMode('image')} /> Write the ISO
        as it is
      </label>
    </fieldset>
  );
}

interface ConfirmFlashProps {
  image: ImageInfo;
  targets: DriveInfo[];
  verify: boolean;
  /** What customising writes onto each card, or why it cannot; null: not customised, undefined: still being worked out. */
  customisation?: ApiResult<CustomisationPreview> | null | undefined;
  /** `isoMode`: for an ISO offered the choice, the one made; undefined otherwise. */
  onConfirm: (isoMode?: IsoMode) => void;
  onCancel: () => void;
}

/** The last stop before erasing: names every drive, and Cancel has the focus. */
export function ConfirmFlash({ image, targets, verify, customisation = null, onConfirm, onCancel }: ConfirmFlashProps) {
  const blocked = customisation === undefined || (customisation !== null && !customisation.ok);
  const warnings = targets.flatMap((t) => t.verdicts.filter((v) => verdictEffect(v) === 'warn'));
  const unbootable = unbootableAsWritten(image);
  const installable = image.disc?.kind === 'windows' || image.disc?.kind === 'non-hybrid';
  // A Windows ISO is made into an installer stick unless asked otherwise; another ISO is written as it is.
  const [isoMode, setIsoMode] = useState<IsoMode>(image.disc?.kind === 'windows' ? 'files' : 'image');
  const files = installable && isoMode === 'files';
  const filesRefused = files && (targets.length !== 1 || customisation !== null);
  return (
    <Modal
      title={targets.length === 1 ? 'Erase this drive?' : `Erase these ${targets.length} drives?`}
      onClose={onCancel}
      className="confirm"
      footer={
        <CancelOk
          onCancel={onCancel}
          focusCancel
          ok="Erase and flash"
          kind="danger"
          onOk={() => onConfirm(installable ? isoMode : undefined)}
          disabled={blocked || filesRefused}
        />
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
      {installable && <IsoModeChoice windows={image.disc?.kind === 'windows'} mode={isoMode} onMode={setIsoMode} />}
      {unbootable !== null && !files && (
        <p className="message warning" data-testid="confirm-unbootable">
          <WarningIcon />
          {unbootable} Write it as it is only for a virtual machine or a tool that reads the ISO from the drive.
          {installable && ' To make a stick that boots, choose “Make an installer stick from its files” above.'}
        </p>
      )}
      {files && (
        <p className="hint" data-testid="confirm-installer">
          Every file of the ISO is copied with its long name, and every written byte read back. Legacy BIOS boot is not
          supported.
        </p>
      )}
      {filesRefused && (
        <p className="message warning">
          An installer stick is made on one drive at a time, without customisation: choose one drive, or write the ISO
          as it is.
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
