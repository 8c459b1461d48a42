/**
 * The flashing station: which drives an armed station takes on its own, and the one line
 * each card gets in its log. Pure rules and shapes, shared by the CLI (`sluice station`), the app's
 * main process and the renderer's station screen.
 */
import type { Drive } from './drive.js';
import type { Phase, Progress } from './progress.js';
import { judgeDrive, refusalFailure, refusalOf } from './verdict.js';
import { formatBytes } from './units.js';

/** At most this many cards are written at once; later cards wait in a queue (a 16-slot reader). */
export const MAX_STATION_JOBS = 16;

/** The default top of the size range: 2 TB, above every SD card and USB stick sold. */
export const DEFAULT_MAX_DRIVE_BYTES = 2_000_000_000_000;

const SIZE_UNITS: Readonly<Record<string, number>> = {
  '': 1,
  b: 1,
  k: 1e3,
  kb: 1e3,
  m: 1e6,
  mb: 1e6,
  g: 1e9,
  gb: 1e9,
  t: 1e12,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/** A size such as 8GB, 64 GB, 7.5G or 30GiB (G and GB are 10^9, as on the card's label), or a byte count; null when it is none. */
export function parseDriveSize(text: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  const unit = SIZE_UNITS[(match?.[2] ?? '').toLowerCase()];
  if (match === null || unit === undefined) return null;
  const bytes = Math.round(Number(match[1]) * unit);
  return Number.isSafeInteger(bytes) ? bytes : null;
}

/** What an armed station accepts, shown before arming. */
export interface StationRules {
  /** Bytes the image puts on a card (null: known only at its end); smaller drives are refused as too small. */
  imageSize: number | null;
  /** The size range, in bytes, inclusive. */
  minSize: number;
  maxSize: number;
  /** Reader slots (their stable names, /dev/disk/by-path/... on Linux) a card must sit in; null: any slot. */
  slots: readonly string[] | null;
  /** Also admit loop devices, RAM disks and disk images (`--virtual`: for tests). */
  virtual: boolean;
}

/** The reasons a station refuses a drive that appeared, beyond the safety verdicts' failure codes. */
export type StationRefusalCode =
  | 'target-too-small'
  | 'target-read-only'
  | 'target-system'
  | 'target-is-source'
  | 'not-a-card'
  | 'outside-size-range'
  | 'outside-slots';

export type Admission = { admitted: true } | { admitted: false; code: StationRefusalCode; message: string };

/**
 * Whether an armed station writes `drive`, which appeared after arming and sits in `slot` (its
 * stable name, or null when it has none). The safety verdicts come first and are the same as for
 * a flash started by hand (the running system, the image's own drive, too small, read-only); then
 * the station's own: a card or stick (removable, USB or SD) and never an internal disk, the size
 * range, the slot list.
 */
export function admitDrive(
  drive: Drive,
  rules: StationRules,
  slot: string | null,
  imageStoredOn: string | null,
): Admission {
  const refusal = refusalOf(judgeDrive(drive, { size: rules.imageSize, storedOn: imageStoredOn }));
  if (refusal !== undefined) {
    const failure = refusalFailure(refusal);
    return { admitted: false, code: failure.code as StationRefusalCode, message: failure.message };
  }
  const card =
    drive.system === null &&
    (drive.virtual ? rules.virtual : drive.removable || drive.bus === 'usb' || drive.bus === 'sd');
  if (!card)
    return {
      admitted: false,
      code: 'not-a-card',
      message: `${drive.device} is not a removable, USB or SD drive${drive.virtual ? ' (a virtual drive: --virtual admits those)' : ''}; a station writes only cards and sticks.`,
    };
  const size = drive.size ?? 0;
  if (size < rules.minSize || size > rules.maxSize) {
    return {
      admitted: false,
      code: 'outside-size-range',
      message: `${drive.device} holds ${formatBytes(size)} (${size} bytes), outside the station's range of ${formatBytes(rules.minSize)} to ${formatBytes(rules.maxSize)}.`,
    };
  }
  if (rules.slots !== null && (slot === null || !rules.slots.includes(slot))) {
    return {
      admitted: false,
      code: 'outside-slots',
      message: `${drive.device} is in ${slot ?? 'no known reader slot'}, not in one of the station's slots.`,
    };
  }
  return { admitted: true };
}

/** How a card's line in the log ends. */
export type StationOutcome = 'ok' | 'failed' | 'cancelled' | 'refused';

/** A card as a station's row and its log line name it. */
export interface StationCard {
  /** The card's number in insertion order among the cards admitted ({n} of the hostname template); null when refused. */
  card: number | null;
  /** The reader slot's stable name, or the device when it has none. */
  slot: string;
  device: string;
  model: string | null;
  serial: string | null;
  /** The drive's capacity in bytes, as it reports it. */
  capacity: number | null;
  /** The hostname this card was given, or null without one. */
  hostname: string | null;
}

/**
 * One card's line in the station's log (JSON Lines, one object a line, appended with fsync): the
 * format the README documents. Never a secret: of the customisation only the hostname.
 */
export interface StationLogEntry extends StationCard {
  /** When the card's job ended (or it was refused), ISO 8601 UTC. */
  time: string;
  /** The capacity check: passed (every marker past the image came back), fake (they did not), or null when it did not run. */
  capacityCheck: 'passed' | 'fake' | null;
  image: string;
  /** The image file's SHA-256. */
  imageSha256: string | null;
  bytesWritten: number;
  /** Image bytes not written because a block map or a filesystem showed them free. */
  bytesSkipped: number;
  /** Bytes per second while writing and while verifying; null when that phase did not run. */
  writeSpeed: number | null;
  verifySpeed: number | null;
  /** Blocks that read back wrong, were rewritten and then read back right. */
  repairedBlocks: number;
  /** Seconds from the card's appearance to this line. */
  seconds: number;
  result: StationOutcome;
  /** The failure or refusal code (common/domain/failure.ts, or StationRefusalCode); null when ok. */
  code: string | null;
  message: string | null;
}

/** The CSV export's columns, in order: every field of a log line. */
export const STATION_LOG_COLUMNS = [
  'time',
  'card',
  'slot',
  'device',
  'model',
  'serial',
  'capacity',
  'capacityCheck',
  'image',
  'imageSha256',
  'hostname',
  'bytesWritten',
  'bytesSkipped',
  'writeSpeed',
  'verifySpeed',
  'repairedBlocks',
  'seconds',
  'result',
  'code',
  'message',
] as const satisfies readonly (keyof StationLogEntry)[];

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, quote or line break. A leading = + - @
 * gets a quote mark in front so that a spreadsheet never runs a cell (a model name is the drive's
 * own text) as a formula.
 */
function csvField(value: string | number | null): string {
  if (value === null) return '';
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The log's entries as CSV with a header line. */
export function stationLogCsv(entries: readonly StationLogEntry[]): string {
  const lines = [
    STATION_LOG_COLUMNS.join(','),
    ...entries.map((e) => STATION_LOG_COLUMNS.map((c) => csvField(e[c])).join(',')),
  ];
  return `${lines.join('\r\n')}\r\n`;
}

/** Where a station's card is: waiting for a free job, its image being prepared, a helper phase, or finished. */
export type StationPhase = 'queued' | 'preparing' | Phase | 'done';

/** One row of the station's view: a card that appeared after arming, from its appearance to its log line. */
export interface StationRow extends StationCard {
  /** Unique among the rows of one armed station. */
  id: number;
  phase: StationPhase;
  /** The latest progress of the current phase, with what limits the speed once measured; null before the helper reports. */
  progress: Pick<Progress, 'bytesDone' | 'bytesTotal' | 'speed' | 'eta' | 'limit'> | null;
  /** Set once the row is done: its log line's result, code and message. */
  result: StationOutcome | null;
  code: string | null;
  message: string | null;
  /** ISO 8601 UTC: when the card appeared, and when its line was logged. */
  startedAt: string;
  endedAt: string | null;
}

/** A running row's progress as a flash reports it, for the words both the app and the CLI show; null while it has none. */
export function rowProgress(row: StationRow): Progress | null {
  if (row.progress === null || row.phase === 'queued' || row.phase === 'preparing' || row.phase === 'done') return null;
  return { ...row.progress, phase: row.phase, target: row.device };
}
