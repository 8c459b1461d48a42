import { useEffect, useRef, useState } from 'react';
import type { SluiceApi } from '../../../common/contracts/ipc-contract.js';
import type { StationStatus } from '../../../common/contracts/station-models.js';
import type { ImageInfo } from '../../../common/domain/image.js';
import { parseDriveSize, type StationRow } from '../../../common/domain/station.js';
import { formatBytes } from '../../../common/domain/units.js';
import {
  batchLine,
  rowDrive,
  rowFraction,
  rowLimit,
  rowPhase,
  rowSpeed,
  rowTime,
  withPeak,
  withRow,
} from '../station.js';
import { ErrorMessage } from './ErrorMessage.js';

/** A short chime when a card is done: the person at the reader hears it is time for the next card. */
function chime(ok: boolean): void {
  try {
    const audio = new AudioContext();
    const tone = audio.createOscillator();
    const gain = audio.createGain();
    tone.frequency.value = ok ? 880 : 220;
    gain.gain.setValueAtTime(0.15, audio.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.4);
    tone.connect(gain).connect(audio.destination);
    tone.start();
    tone.stop(audio.currentTime + 0.4);
    tone.onended = () => void audio.close();
  } catch {
    // No audio device: the row and the notification still say it.
  }
}

interface StationScreenProps {
  api: SluiceApi;
  image: ImageInfo;
  onClose: () => void;
}

/**
 * The flashing station: its rules, shown and set before arming, then one row per card
 * that appeared after arming: slot, drive, phase, progress, speed, result, hostname and time.
 */
export function StationScreen({ api, image, onClose }: StationScreenProps) {
  const [rows, setRows] = useState<StationRow[]>([]);
  const [peaks, setPeaks] = useState<ReadonlyMap<number, number>>(new Map());
  const [status, setStatus] = useState<StationStatus | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [hostname, setHostname] = useState('');
  const [minSize, setMinSize] = useState(image.size === null ? '1GB' : String(image.size));
  const [maxSize, setMaxSize] = useState('2TB');
  const [slots, setSlots] = useState('');
  const announced = useRef(new Set<number>());

  useEffect(() => {
    const stops = [
      api.onStationRow((row) => {
        setRows((current) => withRow(current, row));
        setPeaks((current) => withPeak(current, row));
        if (row.phase === 'done' && row.result !== 'refused' && !announced.current.has(row.id)) {
          announced.current.add(row.id);
          chime(row.result === 'ok');
        }
      }),
      api.onStationStatus(setStatus),
    ];
    return () => stops.forEach((stop) => stop());
  }, [api]);

  const armed = status?.armed === true;
  const min = parseDriveSize(minSize);
  const max = parseDriveSize(maxSize);
  const sizesProblem =
    min === null || max === null
      ? 'Sizes read like 8GB, 30GiB or a number of bytes.'
      : min > max
        ? 'The smallest size is above the largest.'
        : null;

  const arm = async () => {
    if (min === null || max === null) return;
    setBusy(true);
    setError(null);
    const slotList = slots
      .split('\n')
      .map((s) => s.trim())
      .filter(Boolean);
    const result = await api.armStation({
      image: image.source,
      hostname: hostname.trim() === '' ? null : hostname.trim(),
      slots: slotList,
      minSize: min,
      maxSize: max,
    });
    setBusy(false);
    if (!result.ok) setError(result.error.message);
    else setStatus(result.value);
  };

  const stop = async () => {
    setBusy(true);
    const result = await api.stopStation();
    setBusy(false);
    if (!result.ok) setError(result.error.message);
  };

  const exportCsv = async () => {
    const result = await api.exportStationLog();
    setError(result.ok ? null : result.error.message);
  };

  return (
    <section className="station" aria-labelledby="station-title" data-screen="station">
      <h2 id="station-title">
        Flashing station: <span className="chosen-name">{image.name}</span>
      </h2>
      {armed && status?.rules ? (
        <p className="phase" role="status" data-testid="station-status">
          Armed: insert cards. Every removable, USB or SD drive of {formatBytes(status.rules.minSize)} to{' '}
          {formatBytes(status.rules.maxSize)}
          {status.rules.slots === null
            ? ''
            : ` in ${status.rules.slots.length === 1 ? 'its slot' : `${status.rules.slots.length} slots`}`}{' '}
          that appears is written on its own.
        </p>
      ) : (
        <form
          className="station-rules"
          onSubmit={(event) => {
            event.preventDefault();
            void arm();
          }}
        >
          <p className="hint">
            From the moment it is armed, every card inserted that fits these rules is erased and written, up to 16 at
            once. Drives present now are never touched; neither are this computer’s own disks.
          </p>
          <label>
            Hostname template{' '}
            <input
              type="text"
              value={hostname}
              placeholder="pi-{n} (optional)"
              onChange={(e) => setHostname(e.target.value)}
            />
          </label>
          <label>
            Smallest card <input type="text" value={minSize} onChange={(e) => setMinSize(e.target.value)} />
          </label>
          <label>
            Largest card <input type="text" value={maxSize} onChange={(e) => setMaxSize(e.target.value)} />
          </label>
          <label>
            Reader slots, one a line (optional)
            <textarea
              rows={2}
              value={slots}
              placeholder="/dev/disk/by-path/…"
              onChange={(e) => setSlots(e.target.value)}
            />
          </label>
          <ErrorMessage error={sizesProblem} />
          <div className="actions">
            <button type="button" className="button" onClick={onClose} disabled={busy}>
              Back
            </button>
            <button type="submit" className="button primary" disabled={busy || sizesProblem !== null}>
              Start station
            </button>
          </div>
        </form>
      )}
      <ErrorMessage error={error ?? status?.problem ?? null} />
      {batchLine(rows, peaks) !== '' && (
        <p className="muted numeric" data-testid="station-batch">
          {batchLine(rows, peaks)}
        </p>
      )}
      {rows.length > 0 && <StationTable rows={rows} />}
      {(armed || rows.length > 0) && (
        <div className="actions">
          {status?.log !== undefined && <span className="muted">Log: {status.log}</span>}
          <button type="button" className="button" onClick={() => void exportCsv()}>
            Export CSV
          </button>
          {armed ? (
            <button type="button" className="button primary" onClick={() => void stop()} disabled={busy}>
              Stop station
            </button>
          ) : (
            <button type="button" className="button" onClick={onClose}>
              Back
            </button>
          )}
        </div>
      )}
    </section>
  );
}

/** One row per card since arming: slot, drive, phase, progress, speed, hostname and time. */
function StationTable({ rows }: { rows: readonly StationRow[] }) {
  return (
    <table className="station-rows">
      <thead>
        <tr>
          <th scope="col">Slot</th>
          <th scope="col">Drive</th>
          <th scope="col">Phase</th>
          <th scope="col">Progress</th>
          <th scope="col">Speed</th>
          <th scope="col">Hostname</th>
          <th scope="col">Time</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => {
          const fraction = rowFraction(row);
          const limit = rowLimit(row);
          return (
            <tr
              key={row.id}
              data-device={row.device}
              data-slot={row.slot}
              data-result={row.result ?? ''}
              className={row.result === null ? '' : `tone-${row.result === 'ok' ? 'success' : 'failure'}`}
            >
              <td className="slot" title={row.slot}>
                {row.slot.split('/').pop()}
              </td>
              <td>{rowDrive(row)}</td>
              <td data-testid="station-phase" title={row.message ?? undefined}>
                {rowPhase(row)}
                {row.message !== null && <span className="reason">{row.message}</span>}
              </td>
              <td>
                {fraction === null ? '' : <progress value={fraction} max={1} aria-label={`${row.device} progress`} />}
              </td>
              <td className="numeric" data-testid="station-speed">
                {rowSpeed(row)}
                {limit !== '' && <span className="reason">{limit}</span>}
              </td>
              <td>{row.hostname ?? ''}</td>
              <td className="numeric">{rowTime(row)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
