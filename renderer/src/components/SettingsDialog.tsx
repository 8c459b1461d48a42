import { useState } from 'react';
import type { Settings } from '../../../common/contracts/settings.js';
import { Modal } from './Modal.js';
import { ErrorMessage } from './ErrorMessage.js';

const FIELDS: readonly { key: keyof Settings; label: string; help: string }[] = [
  { key: 'verify', label: 'Verify after writing', help: 'Read every drive back and compare it with the image. Turning this off means a bad card goes unnoticed.' },
  { key: 'eject', label: 'Eject when done', help: 'Eject the drives after a successful flash, so they can be pulled out at once.' },
  { key: 'capacityCheck', label: 'Check for fake capacity', help: 'Test blocks past the image are written before it and read back after it: a card that holds less than it claims fails the flash.' },
  { key: 'notifications', label: 'Notify when done', help: 'A desktop notification when a flash ends.' },
  { key: 'showVirtual', label: 'Show virtual drives', help: 'List loop devices and attached disk images as targets.' },
];

interface SettingsDialogProps {
  settings: Settings;
  /** Saves one change; resolves with an error sentence, or null when saved. */
  onChange: (patch: Partial<Settings>) => Promise<string | null>;
  onClose: () => void;
}

/** The settings panel: each change shows at once and is saved as it is made; a failed save puts the box back. */
export function SettingsDialog({ settings, onChange, onClose }: SettingsDialogProps) {
  const [shown, setShown] = useState(settings);
  const [error, setError] = useState<string | null>(null);
  const change = (key: keyof Settings, value: boolean): void => {
    setShown((current) => ({ ...current, [key]: value }));
    void onChange({ [key]: value }).then((problem) => {
      setError(problem);
      if (problem !== null) setShown((current) => ({ ...current, [key]: !value }));
    });
  };
  return (
    <Modal
      title="Settings"
      onClose={onClose}
      className="settings"
      footer={
        <button type="button" className="button primary" onClick={onClose}>
          Done
        </button>
      }
    >
      <ul className="settings-list">
        {FIELDS.map(({ key, label, help }) => (
          <li key={key}>
            <label className="toggle">
              <input type="checkbox" checked={shown[key]} aria-describedby={`setting-${key}-help`} onChange={(event) => change(key, event.target.checked)} />
              {label}
            </label>
            <p className="hint" id={`setting-${key}-help`}>
              {help}
            </p>
          </li>
        ))}
      </ul>
      <ErrorMessage error={error} />
    </Modal>
  );
}
