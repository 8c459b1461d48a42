import { useState } from 'react';
import type { DriveInfo } from '../../../common/contracts/app-models.js';
import { eraseFilesystem, FILESYSTEM_NAMES } from '../../../common/domain/erase.js';
import { formatBytes } from '../../../common/domain/units.js';
import { driveName } from '../labels.js';
import { CancelOk, Modal } from './Modal.js';

interface EraseDialogProps {
  drive: DriveInfo;
  onStart: (label: string | null) => void;
  onCancel: () => void;
}

/** "Erase…": what the drive becomes, an optional label, and a last chance to keep what is on it. */
export function EraseDialog({ drive, onStart, onCancel }: EraseDialogProps) {
  const [label, setLabel] = useState('');
  const filesystem = FILESYSTEM_NAMES[eraseFilesystem(drive.size ?? 0)];
  return (
    <Modal
      title="Erase this drive?"
      onClose={onCancel}
      className="erase-dialog"
      footer={
        <CancelOk
          onCancel={onCancel}
          ok="Erase"
          kind="primary danger"
          onOk={() => onStart(label.trim() === '' ? null : label.trim())}
        />
      }
    >
      <p>
        Everything on <strong>{driveName(drive)}</strong> <span className="muted">{drive.device}</span> (
        {formatBytes(drive.size ?? 0)}) will be lost. It becomes a normal empty drive: one {filesystem} partition over
        all of it, as the SD Association's formatter makes it, readable on Windows, macOS, Linux and cameras.
      </p>
      <label className="field">
        Label (optional)
        <input
          type="text"
          value={label}
          maxLength={11}
          placeholder={filesystem === 'FAT32' ? 'letters, digits, spaces' : 'up to 11 characters'}
          onChange={(event) => setLabel(event.target.value)}
        />
      </label>
    </Modal>
  );
}
