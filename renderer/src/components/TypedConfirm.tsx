import { useId, useState } from 'react';
import type { ApiResult } from '../../../common/contracts/api-result.js';
import type { DriveConfirmation, DriveInfo } from '../../../common/contracts/app-models.js';
import { typedName } from '../../../common/app/typed-name.js';
import { ErrorMessage } from './ErrorMessage.js';

interface TypedConfirmProps {
  drive: DriveInfo;
  /** What typing the name allows: "choose it", "back it up". */
  purpose: string;
  /** The button's words, with the name after them: "Choose", "Back up". */
  action: string;
  /** Where the name goes: the app's core compares it with the drive it listed and keeps the confirmation. */
  confirmDrive: (confirmation: DriveConfirmation) => Promise<ApiResult<null>>;
  onConfirmed: () => void;
  onCancel: () => void;
  cancel: string;
}

/**
 * An internal disk of this computer is chosen only after its name is typed. The page sends what
 * was typed to the core, which compares it with the drive it listed; only the core's yes confirms.
 */
export function TypedConfirm({
  drive,
  purpose,
  action,
  confirmDrive,
  onConfirmed,
  onCancel,
  cancel,
}: TypedConfirmProps) {
  const [typed, setTyped] = useState('');
  const [error, setError] = useState<string | null>(null);
  const inputId = useId();
  const expected = typedName(drive.device);
  const confirm = () =>
    void confirmDrive({ device: drive.device, medium: drive.medium, typed }).then((answer) =>
      answer.ok ? onConfirmed() : setError(answer.error.message),
    );
  return (
    <div className="typed-confirm">
      <label htmlFor={inputId}>
        This is an internal disk of this computer. To {purpose} anyway, type <kbd>{expected}</kbd>:
      </label>
      <div className="actions">
        <input
          id={inputId}
          type="text"
          autoComplete="off"
          spellCheck={false}
          value={typed}
          onChange={(event) => setTyped(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === 'Enter' && typed === expected) confirm();
          }}
          autoFocus
        />
        <button type="button" className="button danger" disabled={typed !== expected} onClick={confirm}>
          {action} {expected}
        </button>
        <button type="button" className="button quiet" onClick={onCancel}>
          {cancel}
        </button>
      </div>
      <ErrorMessage error={error} />
    </div>
  );
}
