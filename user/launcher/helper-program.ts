/**
 * What program the helper is, before any elevation wraps it. See build/HELPER.md for why the
 * packaged app runs the helper with its own Electron binary in Node mode, and what that asks of
 * the Electron fuses.
 */
import { posix, win32 } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * V8 flags for the helper process, measured (1 GiB and 4 GiB raw images, loop device on /dev/shm):
 * the optimizing JIT tiers (Maglev, TurboFan) make an I/O-bound loop no faster but map several MB
 * more of the Node binary as a run gets longer, and a 1 MiB semi-space stops the young generation
 * from growing with the image. With them peak RSS no longer depends on the image size
 * (63.6 MB for 256 MiB, 63.9 MB for 4 GiB; without them 65.6 and 70.3 MB).
 * build/helper/sluice-helper{,.cmd} repeat them for the packaged app (a test keeps them equal).
 */
export const HELPER_V8_FLAGS = ['--max-semi-space-size=1', '--no-opt', '--no-maglev'] as const;

/** The helper's entry point in the build output: privileged/main.js (what root runs, see eslint.config.js). */
export const HELPER_ENTRY = fileURLToPath(new URL('../../privileged/main.js', import.meta.url));

export interface HelperProgram {
  /** An absolute path: pkexec's polkit action and a sudoers rule match it exactly. */
  file: string;
  args: readonly string[];
  /**
   * Environment additions for a direct spawn. sudo, pkexec, osascript and UAC all start the
   * helper with a reset environment, which is why the packaged launcher sets its own.
   */
  env: Readonly<Record<string, string>>;
}

/** This very runtime running the built entry: `npm start`, the CLI, the tests. */
export function builtHelperProgram(): HelperProgram {
  return {
    file: process.execPath,
    args: [...HELPER_V8_FLAGS, HELPER_ENTRY],
    // Inside Electron, process.execPath is the app binary; this makes it behave as plain Node.
    env: { ELECTRON_RUN_AS_NODE: '1' },
  };
}

/**
 * The packaged app's launcher script in its resources directory (build/helper/): it sets
 * ELECTRON_RUN_AS_NODE and runs the app binary on the helper entry, so it works the same through
 * every elevation tool.
 */
export function packagedHelperProgram(resourcesPath: string, platform: NodeJS.Platform = process.platform): HelperProgram {
  const file = platform === 'win32' ? win32.join(resourcesPath, 'sluice-helper.cmd') : posix.join(resourcesPath, 'sluice-helper');
  return { file, args: [], env: {} };
}
