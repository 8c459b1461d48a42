/**
 * How the channel between the app and the helper is laid out when the helper is not the app's
 * direct child, shared by the side that makes it (user/launcher) and the side that opens it
 * (privileged/): the helper takes only a directory or a pipe name from its command line, and
 * these names are fixed.
 */

/** The FIFOs in a channel directory (Linux and macOS: sudo, pkexec, osascript). */
export const FIFO_NAMES = {
  /** App → helper: the job and cancel messages. */
  toHelper: 'to-helper',
  /** Helper → app: ready, progress, log, result. */
  fromHelper: 'from-helper',
  /** App → helper: the image bytes, when the elevation tool cannot pass a descriptor. */
  image: 'image',
} as const;

/**
 * The two named pipes of one job (Windows, UAC): control, and image bytes. Elsewhere the same
 * transport runs over Unix sockets, which is what Node's net makes of a pipe path there, inside a
 * 0700 directory of the app's (pipeDir), so that no other user can connect first and speak for
 * the helper; in /tmp, fixed rather than the user's TMPDIR since root looks for them with its own
 * environment. No elevation uses it off Windows; tests do, so that its code runs for real on Linux.
 */
export function pipePaths(name: string, windows: boolean): { control: string; image: string } {
  if (windows) return { control: `\\\\.\\pipe\\${name}`, image: `\\\\.\\pipe\\${name}-image` };
  return { control: `${pipeDir(name)}/control`, image: `${pipeDir(name)}/image` };
}

/** Off Windows: the directory a job's sockets are in (see pipePaths). */
export function pipeDir(name: string): string {
  return `/tmp/${name}`;
}
