import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { brokerLaunch } from './broker.js';
import { directLaunch } from './direct.js';
import { osascriptLaunch } from './osascript.js';
import { pkexecLaunch } from './pkexec.js';
import { sudoLaunch } from './sudo.js';
import type { Elevation } from './types.js';
import { uacLaunch } from './uac.js';

export interface ElevationContext {
  platform: NodeJS.Platform;
  /** The caller is root already (never true on Windows, where UAC itself skips the prompt for an elevated caller). */
  isRoot: boolean;
  /** The desktop app asks through the system's dialog; the command line can ask in its terminal. */
  frontEnd: 'app' | 'cli';
  /** A person is at a terminal that can answer a password prompt. */
  interactive: boolean;
  /** Root started this process for its user and starts helpers on request (elevation/broker.ts). */
  broker?: boolean;
  /** The user's explicit choice (`sluice flash --elevate`). */
  prefer?: 'sudo' | 'pkexec' | undefined;
  /** Whether a command is installed; see onPath. */
  installed(command: string): boolean;
}

/** Whether `command` is an executable file in one of PATH's directories. */
export function onPath(command: string): boolean {
  return (process.env['PATH'] ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * How this front end gets the helper started as root: through the root process that started it
 * (sudo sluice); directly when it is root already; on Linux
 * pkexec (a desktop dialog, or pkttyagent in a terminal) for the app and for scripts, and sudo for
 * a person at a terminal, each falling back to the other when it is not installed; on macOS the
 * system dialog, or sudo in a terminal; on Windows UAC.
 */
export function chooseElevation(context: ElevationContext): Elevation {
  if (context.platform === 'win32') return uacLaunch;
  if (context.broker === true) return brokerLaunch;
  if (context.isRoot) return directLaunch;
  if (context.prefer === 'sudo') return sudoLaunch;
  if (context.prefer === 'pkexec') return pkexecLaunch;
  const atTerminal = context.frontEnd === 'cli' && context.interactive;
  if (context.platform === 'darwin') return atTerminal ? sudoLaunch : osascriptLaunch;
  const [first, second] = atTerminal ? [sudoLaunch, pkexecLaunch] : [pkexecLaunch, sudoLaunch];
  return context.installed(first.name) || !context.installed(second.name) ? first : second;
}
