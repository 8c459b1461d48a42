/**
 * One interface for every way of getting the helper started as root; each OS's mechanism is its
 * own small module (direct, sudo, pkexec, osascript, uac) and choose.ts picks one.
 */

import type { Readable } from 'node:stream';

/** How the channel reaches the helper (see node/helper-command-line.ts HelperTransport). */
export type ChannelKind = 'inherited' | 'fifo' | 'named-pipe';

export interface ElevationRequest {
  /** What the user is authorizing, for prompts that can say it: "write a disk image to /dev/sdb". */
  reason: string;
  /** A person at a terminal can answer a password prompt (sudo without -n). */
  interactive: boolean;
  /**
   * A shell command root runs first, where the elevation goes through a shell (osascript): the
   * helper is exec'd only if it exits 0 (user/launcher/helper-program.ts macBundleCheck).
   */
  precondition?: string;
}

export interface LaunchCommand {
  file: string;
  args: string[];
}

/** How the launched process ended, with the tail of what it wrote to stderr. */
export interface LaunchExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/** What the launcher needs of the process it started: a ChildProcess, or the broker's stand-in for one. */
export interface LaunchedProcess {
  readonly stdio: readonly unknown[];
  readonly stderr: Readable | null;
  kill(signal?: NodeJS.Signals): boolean;
  on(event: 'error', listener: (error: Error) => void): this;
  on(event: 'close', listener: (code: number | null, signal: NodeJS.Signals | null) => void): this;
}

export interface Elevation {
  readonly name: 'direct' | 'sudo' | 'pkexec' | 'osascript' | 'uac' | 'broker' | 'station';
  /** sudo and pkexec close descriptors above 2; osascript and UAC pass none: see ChannelKind. */
  readonly channel: ChannelKind;
  /** The launched process's stdin reaches the helper as its fd 0 (direct, sudo, pkexec). */
  readonly passesStdin: boolean;
  /** The command that runs `program args…` as root. `program` is an absolute path. */
  command(program: string, args: readonly string[], request: ElevationRequest): LaunchCommand;
  /**
   * The launched process ended before the helper said it was ready. Returns the sentence for an
   * authorization that was refused or cancelled, or null when the tool failed for another reason
   * (the helper could not start at all).
   */
  denial(exit: LaunchExit): string | null;
  /**
   * Starts the command some other way than a spawn of this process's own (the broker's root
   * parent starts it), with stdin and stdout closed and stderr to the launcher.
   */
  launch?(command: LaunchCommand): LaunchedProcess;
}

/** The sentence every front end shows when the user dismissed the password prompt. */
export const AUTHORIZATION_CANCELLED = 'authorization was cancelled';

/** The last non-empty line of a tool's stderr: where sudo and pkexec put their reason. */
export function lastLine(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
  return lines[lines.length - 1] ?? '';
}
