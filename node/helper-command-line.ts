/**
 * The helper's command line, built by the app and parsed by the helper: one definition for both.
 *
 *   main.js [--channel DIR [--image-fifo] | --pipe NAME] [--parent-pid PID] [--source DISK] -- TARGET...
 *
 * --source names the disk the helper reads (a backup, with no targets, or a clone's source),
 * which the user authorized reading as well.
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
}

/** Why the helper refuses its command line. */
export class HelperArgsError extends Error {}

export function helperArgv(args: HelperArgs): string[] {
  const argv: string[] = [];
  const { transport } = args;
  if (transport.kind === 'fifo')
    argv.push('--channel', transport.dir, ...(transport.imageFifo ? ['--image-fifo'] : []));
  if (transport.kind === 'named-pipe') argv.push('--pipe', transport.name);
  if (args.parentPid !== null) argv.push('--parent-pid', String(args.parentPid));
  if (args.source !== null) argv.push('--source', args.source);
  return [...argv, '--', ...args.targets];
}

/** Whether `text` holds a control character (a newline, say), which a password prompt showing it would print as it is. */
export function hasControlCharacter(text: string): boolean {
  return [...text].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
}

/** Windows pipe names and our FIFO directories are plain: anything else is not from our app. */
const PIPE_NAME = /^sluice-[0-9a-f]{32}$/;

export function parseHelperArgv(argv: readonly string[]): HelperArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        channel: { type: 'string' },
        'image-fifo': { type: 'boolean', default: false },
        pipe: { type: 'string' },
        'parent-pid': { type: 'string' },
        source: { type: 'string' },
      },
    });
  } catch (error) {
    throw new HelperArgsError(errorText(error));
  }
  const { values, positionals: targets } = parsed;
  const source = values.source ?? null;
  // A backup reads its source and writes no drive; everything else writes at least one.
  const fewest = source === null ? 1 : 0;
  if (targets.length < fewest || targets.length > MAX_TARGETS)
    throw new HelperArgsError(`expected ${fewest} to ${MAX_TARGETS} target drives, got ${targets.length}`);
  if ([...targets, ...(source === null ? [] : [source])].some((t) => t.length === 0 || t.length > 256))
    throw new HelperArgsError('a drive path is empty or too long');

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
  return { transport, parentPid, targets, source };
}
