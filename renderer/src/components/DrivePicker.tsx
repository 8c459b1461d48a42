import { useId, useState } from 'react';
import type { ApiResult } from '../../../common/contracts/api-result.js';
import type { DriveConfirmation, DriveInfo } from '../../../common/contracts/app-models.js';
import { formatBytes } from '../../../common/domain/units.js';
import { isDriveShown, verdictEffect, type DriveVisibility } from '../../../common/domain/verdict.js';
import { isCheckable, isCopyable, isSelectable } from '../flow.js';
import { BUS_LABEL, driveName, verdictBadge } from '../labels.js';
import { CancelOk, Modal } from './Modal.js';
import { TypedConfirm } from './TypedConfirm.js';

interface DrivePickerProps {
  drives: DriveInfo[];
  /** What is listed while "show all drives" is off. */
  visibility: DriveVisibility;
  selected: string[];
  confirmedSystem: string[];
  onDone: (devices: string[], confirmedSystem: string[]) => void;
  onCancel: () => void;
  /** "Back up…" on a drive's row: save it into an image file. */
  onBackup: (drive: DriveInfo) => void;
  /** Check the drive for fake capacity (its data is put back). */
  onCheck: (drive: DriveInfo) => void;
  /** Erase the drive back to one empty partition. */
  onErase: (drive: DriveInfo) => void;
  /** Compare the drive with an image it should hold, writing nothing. */
  onCompare: (drive: DriveInfo) => void;
  /** Sends a typed name to the core (SluiceApi.confirmDrive). */
  confirmDrive: (confirmation: DriveConfirmation) => Promise<ApiResult<null>>;
}

function Badges({ drive }: { drive: DriveInfo }) {
  return (
    <span className="badges">
      {drive.verdicts.map((verdict) => (
        <span key={verdict.kind} className={`badge ${verdictEffect(verdict)}`}>
          {verdictBadge(verdict)}
        </span>
      ))}
    </span>
  );
}

/** Why a drive cannot be checked or erased from its row (the main process and the helper check again); null when it can. */
function notCheckable(drive: DriveInfo): string | null {
  if (isCheckable(drive)) return null;
  if (drive.system === 'running') return 'Sluice does not write to the running system';
  if (drive.system === 'internal') return "Offered for cards and sticks, not this computer's own disks";
  return drive.readOnly ? 'It is read-only' : 'There is no medium in it';
}

/** The drive list: live as drives come and go, several may be chosen, unsafe ones explain themselves. */
export function DrivePicker({
  drives,
  visibility,
  selected,
  confirmedSystem,
  onDone,
  onCancel,
  onBackup,
  onCheck,
  onErase,
  onCompare,
  confirmDrive,
}: DrivePickerProps) {
  const [chosen, setChosen] = useState(selected);
  const [confirmed, setConfirmed] = useState(confirmedSystem);
  // Opened again with an internal disk chosen, the list shows it.
  const [showAll, setShowAll] = useState(() =>
    drives.some((d) => selected.includes(d.device) && !isDriveShown(d, visibility)),
  );
  const [pendingSystem, setPendingSystem] = useState<string | null>(null);
  const listId = useId();

  // The list is live: a drive unplugged while the picker is open drops out of the choice too.
  const stillChosen = chosen.filter((device) => drives.some((d) => d.device === device && isSelectable(d)));
  const hidden = drives.filter((d) => !isDriveShown(d, visibility)).length;
  const visible = drives.filter((d) => isDriveShown(d, { ...visibility, showAll }));

  const toggle = (drive: DriveInfo, checked: boolean): void => {
    if (!checked) {
      setChosen((list) => list.filter((d) => d !== drive.device));
      setConfirmed((list) => list.filter((d) => d !== drive.device));
    } else if (
      drive.verdicts.some((v) => verdictEffect(v) === 'confirm-by-name') &&
      !confirmed.includes(drive.device)
    ) {
      setPendingSystem(drive.device);
    } else {
      setChosen((list) => [...list, drive.device]);
    }
  };

  return (
    <Modal
      title="Select target drives"
      onClose={onCancel}
      className="picker"
      footer={
        <CancelOk
          onCancel={onCancel}
          disabled={stillChosen.length === 0 && selected.length === 0}
          onOk={() =>
            onDone(
              stillChosen,
              confirmed.filter((d) => stillChosen.includes(d)),
            )
          }
          ok={
            stillChosen.length === 0
              ? selected.length === 0
                ? 'Select'
                : 'Clear selection'
              : `Select ${stillChosen.length} drive${stillChosen.length === 1 ? '' : 's'}`
          }
        />
      }
    >
      {hidden > 0 && (
        <label className="toggle">
          <input type="checkbox" checked={showAll} onChange={(event) => setShowAll(event.target.checked)} />
          Show all drives ({hidden} more: this computer’s own disks{visibility.showVirtual ? '' : ' and virtual drives'}
          )
        </label>
      )}
      {visible.length === 0 ? (
        <p className="empty" role="status">
          No drives found. Plug in an SD card or a USB drive: it appears here by itself.
        </p>
      ) : (
        <ul className="drive-list" id={listId} aria-label="Drives">
          {visible.map((drive) => {
            const selectable = isSelectable(drive);
            const inputId = `${listId}-${drive.device}`;
            const reasonId = `${inputId}-reason`;
            const reasons = drive.verdicts.map((v) => v.message).join(' ');
            const notWritable = notCheckable(drive);
            return (
              <li key={drive.device} className={`drive-row ${selectable ? '' : 'blocked'}`} data-device={drive.device}>
                <input
                  id={inputId}
                  type="checkbox"
                  checked={stillChosen.includes(drive.device)}
                  disabled={!selectable}
                  aria-describedby={reasons === '' ? undefined : reasonId}
                  onChange={(event) => toggle(drive, event.target.checked)}
                />
                <label htmlFor={inputId}>
                  <span className="drive-name">{driveName(drive)}</span>
                  <span className="muted">
                    {[drive.size === null ? 'no medium' : formatBytes(drive.size), BUS_LABEL[drive.bus], drive.device]
                      .filter(Boolean)
                      .join(' · ')}
                  </span>
                  <Badges drive={drive} />
                  {reasons !== '' && (
                    <span className="reason" id={reasonId}>
                      {reasons}
                    </span>
                  )}
                </label>
                <button
                  type="button"
                  className="button quiet row-action"
                  aria-label={`Back up ${driveName(drive)} (${drive.device})`}
                  title={
                    isCopyable(drive)
                      ? 'Save this drive into an image file'
                      : drive.system === 'running'
                        ? 'Sluice does not back up the running system'
                        : 'There is no medium in it'
                  }
                  disabled={!isCopyable(drive)}
                  onClick={() => onBackup(drive)}
                >
                  Back up…
                </button>
                {(
                  [
                    {
                      label: 'Check…',
                      name: `Check ${driveName(drive)} (${drive.device}) for fake capacity`,
                      does: 'Find out whether it holds what it claims; its data is put back',
                      run: onCheck,
                    },
                    {
                      label: 'Erase…',
                      name: `Erase ${driveName(drive)} (${drive.device})`,
                      does: 'Make it a normal empty drive again',
                      run: onErase,
                    },
                  ] as const
                ).map(({ label, name, does, run }) => (
                  <button
                    key={label}
                    type="button"
                    className="button quiet row-action"
                    aria-label={name}
                    title={notWritable ?? does}
                    disabled={notWritable !== null}
                    onClick={() => run(drive)}
                  >
                    {label}
                  </button>
                ))}
                <button
                  type="button"
                  className="button quiet row-action"
                  aria-label={`Compare ${driveName(drive)} (${drive.device}) with an image`}
                  title={
                    isCopyable(drive)
                      ? 'Check it against an image it should hold; nothing is written'
                      : drive.system === 'running'
                        ? 'Sluice does not read the running system'
                        : 'There is no medium in it'
                  }
                  disabled={!isCopyable(drive)}
                  onClick={() => onCompare(drive)}
                >
                  Compare…
                </button>
                {pendingSystem === drive.device && (
                  <TypedConfirm
                    drive={drive}
                    purpose="choose it"
                    action="Choose"
                    cancel="Keep it unselected"
                    confirmDrive={confirmDrive}
                    onConfirmed={() => {
                      setConfirmed((list) => [...list, drive.device]);
                      setChosen((list) => [...list, drive.device]);
                      setPendingSystem(null);
                    }}
                    onCancel={() => setPendingSystem(null)}
                  />
                )}
              </li>
            );
          })}
        </ul>
      )}
    </Modal>
  );
}
