import type { HelperLaunchOptions } from '../user/launcher/launch.js';
import { chooseElevation, onPath, type ElevationContext } from '../user/launcher/elevation/choose.js';

/**
 * How every command of this CLI runs the helper: root through the elevation this terminal allows
 * (or the one `--elevate` names), a password asked at the terminal when there is one, and the
 * helper's log lines on stderr.
 */
export function cliHelperOptions(prefer: ElevationContext['prefer']): Required<Pick<HelperLaunchOptions, 'elevation' | 'interactive' | 'onLog'>> {
  const interactive = process.stdin.isTTY === true;
  return {
    elevation: chooseElevation({ platform: process.platform, isRoot: process.getuid?.() === 0, frontEnd: 'cli', interactive, prefer, installed: onPath }),
    interactive,
    onLog: (_level, message) => process.stderr.write(`sluice: ${message}\n`),
  };
}
