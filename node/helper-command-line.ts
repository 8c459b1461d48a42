/**
 * The helper's command line, built by the app and parsed by the helper: one definition for both.
 *
 *   main.js --write [--channel DIR [--image-fifo] | --pipe NAME] [--parent-pid PID] [--source DISK] -- TARGET...
 *   main.js --read-only [--channel DIR [--image-fifo] | --pipe NAME] [--parent-pid PID] --source DISK --
 *   main.js --write --channel DIR --parent-pid PID --station --min-size BYTES --max-size BYTES [--slot SLOT]... [--virtual] --
 *
 * The first argument says whether the helper may write at all: `--read-only` for one that only
 * reads its source (a backup, a verify), which it must be started with and which refuses any job
 * that writes; `--write` for everything else. It is always the first and only there: pkexec picks
 * the polkit action, and so the words of the password prompt, by the first argument alone
 * (exec.argv1, see build/polkit/), so a backup's prompt says the drive is read, and a helper
 * started with its mode elsewhere would have been authorized by a prompt for something else.
 * --source names the disk the helper reads (a backup, with no targets, or a clone's source),
 * which the user authorized reading as well. --station arms a flashing station instead of running
 * a job: its rules are what the user authorized (privileged/armed-station.ts), and each card's
 * helper it starts carries --medium, the disk sequence number root read for its one target.
 * The targets come last, so that an authorization prompt showing the command line (pkexec's
 * `$(command_line)`, see build/polkit/) ends with the drive the user is about to erase. They are
 * also a promise: the helper refuses a job message naming any other drive. Every drive is given
 * under the system's own name for it (the launcher resolves links first; the helper refuses any
 * other name, see writer/drive-name.ts), so the prompt names the disk that is written.
 */
import { parseArgs } from 'node:util';
import { MAX_TARGETS } from '../common/contracts/helper-protocol.js';
import { errorText } from '../common/domain/error-details.js';

/** How the channel (and, when stdin cannot carry it, the image) reaches the helper. */
export type HelperTransport =
  /** A direct child: the channel is an inherited socket on fd 3 and the image is fd 0. */
  | { kind: 'inherited' }
  /**
   * FIFOs in a 0700 directory the unprivileged app made (see channel-dir.ts), for elevation tools
   * that close every descriptor above 2. The image stays on fd 0 unless `imageFifo` (osascript,
   * which passes no descriptor at all).
   */
  | { kind: 'fifo'; dir: string; imageFifo: boolean }
  /** Windows: named pipes the unprivileged app created (see user/launcher/pipe-servers.ts). */
  | { kind: 'named-pipe'; name: string };

export interface HelperArgs {
  transport: HelperTransport;
  /** The app's process id, when the helper is not its direct child: the helper stops if it disappears. */
  parentPid: number | null;
  /** The drives the user authorized writing to, in the order of the job message; none for a backup or a verify. */
  targets: string[];
  /** The disk the user authorized reading (backup, clone); null for a flash. */
  source: string | null;
  /** An armed station (no targets, no source): the cards it may start a helper for. */
  station?: StationLimits;
  /** A station card's helper: the medium root found in its one target (Drive.medium); its job must name this one. */
  medium?: string;
}

/** What an armed station's root side admits, as the user authorized it (common/domain/station.ts StationRules). */
export interface StationLimits {
  /** The size range in bytes, inclusive. */
  minSize: number;
  maxSize: number;
  /** Reader slots a card must sit in (/dev/disk/by-path names, or a loop device's backing file); empty: any slot. */
  slots: string[];
  /** Loop devices count as cards (tests). */
  virtual: boolean;
}

/** Why the helper refuses its command line. */
export class HelperArgsError extends Error {}

/** A helper that writes no drive: no targets, and no station (whose cards are its targets). */
export function writesNothing(args: { targets: readonly string[]; station?: StationLimits | undefined }): boolean {
  return args.targets.length === 0 && args.station === undefined;
}

export function helperArgv(args: HelperArgs): string[] {
  const argv: string[] = [writesNothing(args) ? '--read-only' : '--write'];
  const { transport } = args;
  if (transport.kind === 'fifo')
    argv.push('--channel', transport.dir, ...(transport.imageFifo ? ['--image-fifo'] : []));
  if (transport.kind === 'named-pipe') argv.push('--pipe', transport.name);
  if (args.parentPid !== null) argv.push('--parent-pid', String(args.parentPid));
  if (args.source !== null) argv.push('--source', args.source);
  if (args.medium !== undefined) argv.push('--medium', args.medium);
  const { station } = args;
  if (station !== undefined) {
    argv.push('--station', '--min-size', String(station.minSize), '--max-size', String(station.maxSize));
    for (const slot of station.slots) argv.push('--slot', slot);
    if (station.virtual) argv.push('--virtual');
  }
  return [...argv, '--', ...args.targets];
}

/** Whether `text` holds a control character (a newline, say), which a password prompt showing it would print as it is. */
export function hasControlCharacter(text: string): boolean {
  return [...text].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
}

/** Windows pipe names and our FIFO directories are plain: anything else is not from our app. */
const PIPE_NAME = /^sluice-[0-9a-f]{32}$/;

const MODES: readonly string[] = ['--write', '--read-only'];

/** The mode, which must be the first argument and only there (see above), and the arguments after it. */
function splitMode(argv: readonly string[]): { readOnly: boolean; rest: string[] } {
  const [mode, ...rest] = argv;
  if (mode === undefined || !MODES.includes(mode))
    throw new HelperArgsError(
      `the first argument must be the mode, --write or --read-only (the password prompt is chosen by it), not ${mode === undefined ? 'nothing' : JSON.stringify(mode)}`,
    );
  const end = rest.indexOf('--');
  if ((end === -1 ? rest : rest.slice(0, end)).some((arg) => MODES.includes(arg)))
    throw new HelperArgsError('the mode (--write or --read-only) is given once, as the first argument');
  return { readOnly: mode === '--read-only', rest };
}

export function parseHelperArgv(argv: readonly string[]): HelperArgs {
  const { readOnly, rest } = splitMode(argv);
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      allowPositionals: true,
      strict: true,
      options: {
        channel: { type: 'string' },
        'image-fifo': { type: 'boolean', default: false },
        pipe: { type: 'string' },
        'parent-pid': { type: 'string' },
        source: { type: 'string' },
        medium: { type: 'string' },
        station: { type: 'boolean', default: false },
        'min-size': { type: 'string' },
        'max-size': { type: 'string' },
        slot: { type: 'string', multiple: true },
        virtual: { type: 'boolean', default: false },
      },
    });
  } catch (error) {
    throw new HelperArgsError(errorText(error));
  }
  const { values, positionals: targets } = parsed;
  const source = values.source ?? null;
  const station = values.station ? stationLimits(values) : undefined;
  if (station !== undefined && (targets.length > 0 || source !== null))
    throw new HelperArgsError('an armed station names no drive: it takes the cards inserted after arming');
  // A station writes no drive of its own, a backup reads its source and writes none; everything else writes at least one.
  const fewest = source === null && station === undefined ? 1 : 0;
  if (targets.length < fewest || targets.length > MAX_TARGETS)
    throw new HelperArgsError(`expected ${fewest} to ${MAX_TARGETS} target drives, got ${targets.length}`);
  if ([...targets, ...(source === null ? [] : [source])].some((t) => t.length === 0 || t.length > 256))
    throw new HelperArgsError('a drive path is empty or too long');
  checkMode(readOnly, writesNothing({ targets, station }));

  let transport: HelperTransport;
  if (values.channel !== undefined && values.pipe !== undefined)
    throw new HelperArgsError('--channel and --pipe are alternatives');
  if (values.channel !== undefined) {
    if (!values.channel.startsWith('/')) throw new HelperArgsError('--channel must be an absolute path');
    if (hasControlCharacter(values.channel))
      throw new HelperArgsError(
        '--channel has a control character in it (a newline?): the temporary folder (TMPDIR) must have a plain name',
      );
    transport = { kind: 'fifo', dir: values.channel, imageFifo: values['image-fifo'] };
  } else if (values.pipe !== undefined) {
    if (!PIPE_NAME.test(values.pipe)) throw new HelperArgsError('--pipe is not a Sluice pipe name');
    transport = { kind: 'named-pipe', name: values.pipe };
  } else {
    if (values['image-fifo']) throw new HelperArgsError('--image-fifo needs --channel');
    transport = { kind: 'inherited' };
  }

  let parentPid: number | null = null;
  if (values['parent-pid'] !== undefined) {
    parentPid = Number(values['parent-pid']);
    if (!Number.isSafeInteger(parentPid) || parentPid < 1)
      throw new HelperArgsError('--parent-pid must be a process id');
  }
  const medium = values.medium;
  if (medium !== undefined && (!/^\d{1,20}$/.test(medium) || targets.length !== 1 || source !== null))
    throw new HelperArgsError('--medium is a disk sequence number, for a helper that writes one drive');
  return {
    transport,
    parentPid,
    targets,
    source,
    ...(station === undefined ? {} : { station }),
    ...(medium === undefined ? {} : { medium }),
  };
}

/**
 * Whether `args` is a command line an armed station runs a card's job for: the card's one drive and
 * its channel's directory, or why not. A card's helper writes exactly one drive over a directory of
 * FIFOs, and its image comes through one of them (--image-fifo): the station's root side has no
 * standard input of a card's. Root names the card's medium itself.
 */
export function cardCommandLine(args: HelperArgs): { target: string; dir: string } | { refused: string } {
  const [target, ...others] = args.targets;
  if (target === undefined || others.length > 0 || args.source !== null || args.station !== undefined)
    return { refused: 'a card helper writes exactly one drive' };
  if (args.medium !== undefined) return { refused: 'root names the medium itself' };
  if (args.transport.kind !== 'fifo') return { refused: 'its channel is not a directory of FIFOs' };
  if (!args.transport.imageFifo)
    return {
      refused:
        "its image does not come through its channel's FIFO (--image-fifo), the only way a card's image reaches the station",
    };
  return { target, dir: args.transport.dir };
}

/** `--read-only` exactly when the helper writes nothing, so that the password prompt chosen by it says what the helper can do. */
function checkMode(readOnly: boolean, writesNone: boolean): void {
  if (writesNone && !readOnly) throw new HelperArgsError('a helper that writes no drive is started with --read-only');
  if (!writesNone && readOnly)
    throw new HelperArgsError('a --read-only helper names no drive to write and arms no station');
}

/** A byte count of the command line: digits only, a safe integer. */
function byteCount(text: string | undefined, flag: string): number {
  const bytes = Number(text);
  if (text === undefined || !/^\d{1,16}$/.test(text) || !Number.isSafeInteger(bytes))
    throw new HelperArgsError(`--station needs ${flag} as a number of bytes`);
  return bytes;
}

/** The station flags: both ends of the size range, and its slots as absolute paths without control characters. */
function stationLimits(values: {
  'min-size'?: string | undefined;
  'max-size'?: string | undefined;
  slot?: string[] | undefined;
  virtual: boolean;
}): StationLimits {
  const minSize = byteCount(values['min-size'], '--min-size');
  const maxSize = byteCount(values['max-size'], '--max-size');
  if (minSize > maxSize) throw new HelperArgsError('--min-size is above --max-size');
  const slots = values.slot ?? [];
  if (slots.some((slot) => !slot.startsWith('/') || slot.length > 4096 || hasControlCharacter(slot)))
    throw new HelperArgsError('a --slot is not an absolute path of plain characters');
  return { minSize, maxSize, slots, virtual: values.virtual };
}
