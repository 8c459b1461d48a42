/**
 * The station screen's pure parts: the rows as the main process reports them, and the
 * words each row shows. Testable without a browser.
 */
import { rowProgress, type StationPhase, type StationRow } from '../../common/domain/station.js';
import { formatBytes } from '../../common/domain/units.js';
import { limitWords } from '../../common/app/bottleneck.js';
import { PHASE_LABEL } from '../../common/app/phase-label.js';

/** Rows by id, newest first: a row's later reports replace its earlier ones. */
export function withRow(rows: readonly StationRow[], row: StationRow): StationRow[] {
  const others = rows.filter((r) => r.id !== row.id);
  return [row, ...others].sort((a, b) => b.id - a.id);
}

const STATION_PHASE_LABEL: Readonly<Record<Exclude<StationPhase, 'done'>, string>> = {
  queued: 'Waiting for a free slot',
  preparing: 'Preparing',
  ...PHASE_LABEL,
};

/** What a row's phase column says: the phase while it runs, how it ended once done. */
export function rowPhase(row: StationRow): string {
  if (row.phase !== 'done') return STATION_PHASE_LABEL[row.phase];
  switch (row.result) {
    case 'ok':
      return 'Done: insert the next card';
    case 'refused':
      return 'Refused';
    case 'cancelled':
      return 'Cancelled';
    default:
      return 'Failed';
  }
}

/** The progress of a running row, 0 to 1, or null when there is none to show. */
export function rowFraction(row: StationRow): number | null {
  const p = rowProgress(row);
  if (p === null || p.bytesTotal === null || p.bytesTotal === 0) return null;
  return Math.min(1, p.bytesDone / p.bytesTotal);
}

export function rowSpeed(row: StationRow): string {
  const p = rowProgress(row);
  return p !== null && p.speed > 0 ? `${formatBytes(p.speed)}/s` : '';
}

/**
 * What limits a running row's speed, as the flash's progress says it ("limited by the drive"): on
 * a station it tells a slow card, or a hub or reader shared by many, from a slow image.
 */
export function rowLimit(row: StationRow): string {
  const progress = rowProgress(row);
  return progress === null ? '' : (limitWords(progress) ?? '');
}

/** The drive as a person finds it: its model and serial number, and its capacity. */
export function rowDrive(row: StationRow): string {
  const parts = [
    row.model ?? 'Unnamed drive',
    row.serial === null ? null : `SN ${row.serial}`,
    row.capacity === null ? null : formatBytes(row.capacity),
  ];
  return parts.filter((p) => p !== null).join(' · ');
}

/** The time a row started, or ended once done, as hh:mm:ss local time. */
export function rowTime(row: StationRow): string {
  return new Date(row.endedAt ?? row.startedAt).toLocaleTimeString([], {
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hour12: false,
  });
}

/** Per row id, the fastest its card has written so far, in bytes per second: what that card can take. */
export function withPeak(peaks: ReadonlyMap<number, number>, row: StationRow): ReadonlyMap<number, number> {
  const p = rowProgress(row);
  if (p?.phase !== 'writing' || p.speed <= (peaks.get(row.id) ?? 0)) return peaks;
  return new Map(peaks).set(row.id, p.speed);
}

/**
 * The batch in one line: the cards being written, their speed in all, against the sum of what each
 * of them reached on its own at best. A total well under that sum points at something the cards
 * share (a hub, a reader, the computer, the image's decoding) rather than at any one card.
 */
export function batchLine(rows: readonly StationRow[], peaks: ReadonlyMap<number, number>): string {
  const writing = rows.filter((row) => rowProgress(row)?.phase === 'writing');
  if (writing.length === 0) return '';
  const total = writing.reduce((sum, row) => sum + (rowProgress(row)?.speed ?? 0), 0);
  const best = writing.reduce((sum, row) => sum + (peaks.get(row.id) ?? 0), 0);
  const share = best > 0 ? ` (${Math.round((100 * total) / best)}%)` : '';
  return `${writing.length} ${writing.length === 1 ? 'card' : 'cards'} writing: ${formatBytes(total)}/s in all, of ${formatBytes(best)}/s they reached each at best${share}`;
}
