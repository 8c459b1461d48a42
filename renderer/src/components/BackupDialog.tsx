import { useId, useState } from 'react';
import type { ApiResult } from '../../../common/contracts/api-result.js';
import type { BackupRequest, DriveConfirmation, DriveInfo } from '../../../common/contracts/app-models.js';
import { formatBytes } from '../../../common/domain/units.js';
import { driveName } from '../labels.js';
import { WarningIcon } from './Icons.js';
import { CancelOk, Modal } from './Modal.js';
import { ErrorMessage } from './ErrorMessage.js';
import { TypedConfirm } from './TypedConfirm.js';

type Compression = BackupRequest['compress'];
/** What the dialog chose: the rest of the backup's request. */
export type BackupChoices = Pick<BackupRequest, 'compress' | 'trimToPartitions' | 'shrink'>;

/** The formats offered, best first; the suffix is what the save dialog suggests. */
const FORMATS: readonly { value: Compression; label: string; note: string }[] = [
  { value: 'zstd', label: 'Zstandard (.img.zst)', note: 'fast; empty space costs almost nothing' },
  { value: 'xz', label: 'xz (.img.xz)', note: 'smallest, several times slower' },
  { value: 'gz', label: 'gzip (.img.gz)', note: 'for tools that know nothing newer' },
  { value: null, label: 'Uncompressed (.img)', note: 'as large as the drive' },
];

interface BackupDialogProps {
  drive: DriveInfo;
  verify: boolean;
  /** The save dialog is open, or the backup is being started. */
  busy: boolean;
  error: string | null;
  onStart: (choices: BackupChoices) => void;
  onCancel: () => void;
  /** Sends a typed name to the core (SluiceApi.confirmDrive): an internal disk is backed up only after it. */
  confirmDrive: (confirmation: DriveConfirmation) => Promise<ApiResult<null>>;
}

/** "Back up this drive": how to save it, then the system's save dialog. The drive is only read. */
export function BackupDialog({ drive, verify, busy, error, onStart, onCancel, confirmDrive }: BackupDialogProps) {
  const [compress, setCompress] = useState<Compression>('zstd');
  const [trim, setTrim] = useState(false);
  const [shrink, setShrink] = useState(false);
  // Reading a whole internal disk needs its name typed, as `sluice backup` asks at the terminal.
  const [typedOk, setTypedOk] = useState(drive.system !== 'internal');
  const groupId = useId();
  return (
    <Modal
      title="Back up this drive"
      // While the save dialog is open, closing this one would not take back the file chosen there.
      onClose={() => !busy && onCancel()}
      className="backup"
      footer={
        <CancelOk
          onCancel={onCancel}
          cancelDisabled={busy}
          ok={busy ? 'Waiting for the save dialog…' : 'Choose where to save…'}
          disabled={busy || !typedOk}
          onOk={() => onStart({ compress, trimToPartitions: trim, shrink: compress === null && shrink })}
        />
      }
    >
      <p>
        Sluice reads <strong>{driveName(drive)}</strong>{' '}
        <span className="muted">
          ({[drive.device, drive.size === null ? null : formatBytes(drive.size)].filter(Boolean).join(' · ')})
        </span>{' '}
        and saves it as an image file that can be flashed back, bit for bit. The drive is only read; its volumes are
        unmounted while it is.
      </p>
      <fieldset className="choices" aria-labelledby={groupId}>
        <legend id={groupId}>Format</legend>
        {FORMATS.map((format) => (
          <label key={format.label} className="choice">
            <input
              type="radio"
              name="backup-format"
              checked={compress === format.value}
              onChange={() => setCompress(format.value)}
            />
            <span>
              {format.label} <span className="muted">· {format.note}</span>
            </span>
          </label>
        ))}
      </fieldset>
      <label className="choice">
        <input type="checkbox" checked={trim} onChange={(event) => setTrim(event.target.checked)} />
        <span>
          Stop after the last partition{' '}
          <span className="muted">· smaller when the partitions do not fill the drive</span>
        </span>
      </label>
      {compress === null && (
        <label className="choice">
          <input type="checkbox" checked={shrink} onChange={(event) => setShrink(event.target.checked)} />
          <span>
            Shrink to fit a smaller card{' '}
            <span className="muted">
              · its last ext2/3/4, FAT16 or FAT32 partition cut to what it holds (Linux); when you flash it, Customise…
              can grow an ext root back to the card on the first boot
            </span>
          </span>
        </label>
      )}
      {!verify && (
        <p className="message warning">
          <WarningIcon />
          Verification is off: Sluice will not read the file back to check it.
        </p>
      )}
      {!typedOk && (
        <TypedConfirm
          drive={drive}
          purpose="back it up"
          action="Back up"
          cancel="Cancel"
          confirmDrive={confirmDrive}
          onConfirmed={() => setTypedOk(true)}
          onCancel={onCancel}
        />
      )}
      <ErrorMessage error={error} />
    </Modal>
  );
}
