import type { HelperLaunchOptions } from '../user/launcher/launch.js';
import { chooseElevation, onPath, type ElevationContext } from '../user/launcher/elevation/choose.js';
import { brokerAvailable } from '../user/launcher/elevation/broker.js';

/**
 * How every command of this CLI runs the helper: root through the process that started it as the
 * user (sudo sluice), else through the elevation this terminal allows (or the one `--elevate`
 * names), a password asked at the terminal when there is one, and the helper's log lines on stderr.
 */
export function cliHelperOptions(
  prefer: ElevationContext['prefer'],
): Required<Pick<HelperLaunchOptions, 'elevation' | 'interactive' | 'onLog'>> {
  const interactive = process.stdin.isTTY === true;
  return {
    elevation: chooseElevation({
      platform: process.platform,
      isRoot: process.getuid?.() === 0,
      broker: brokerAvailable(),
      frontEnd: 'cli',
      interactive,
      prefer,
      installed: onPath,
    }),
    interactive,
    onLog: (_level, message) => process.stderr.write(`sluice: ${message}\n`),
  };
}
