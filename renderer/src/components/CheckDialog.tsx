import type { DriveInfo } from '../../../common/contracts/app-models.js';
import { formatBytes } from '../../../common/domain/units.js';
import { driveName } from '../labels.js';
import { CancelOk, Modal } from './Modal.js';

interface CheckDialogProps {
  drive: DriveInfo;
  onStart: () => void;
  onCancel: () => void;
}

/** "Check this card…": what the check does to the drive (nothing lasting), before it starts. */
export function CheckDialog({ drive, onStart, onCancel }: CheckDialogProps) {
  return (
    <Modal
      title="Check this card for fake capacity?"
      onClose={onCancel}
      className="check-dialog"
      footer={<CancelOk onCancel={onCancel} ok="Check" onOk={onStart} />}
    >
      <p>
        <strong>{driveName(drive)}</strong> <span className="muted">{drive.device}</span> claims{' '}
        {formatBytes(drive.size ?? 0)}. Sluice writes test blocks over the whole drive and reads them back to find how
        much it really holds, then puts back what was there: nothing on it is lost. It takes seconds; leave the card in
        until it is done.
      </p>
    </Modal>
  );
}
