import { posix, win32 } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where a command line comes from: Sluice's own at start, or a second instance's. */
export interface CommandLineContext {
  /** Whose path rules apply: Windows paths and file URLs on win32, POSIX ones elsewhere. */
  platform: NodeJS.Platform;
  /** The directory the command ran in (for a second instance, the one Electron reports): relative paths are relative to it. */
  workingDirectory: string;
  /**
   * Electron runs the app from a path on its command line (`electron .`, process.defaultApp):
   * the first argument that is not a switch is the app, not a file. A packaged Sluice is its own
   * executable and has no such argument.
   */
  appInArguments: boolean;
}

export interface CommandLineFiles {
  /** Absolute paths, in command-line order. */
  files: string[];
  /** Arguments that name something other than a file on this computer (a web address, a file URL on another host). */
  notLocal: string[];
}

/** `file:` in any case: the one kind of URL that names a local file. */
const FILE_URL = /^file:/i;
/** Any other scheme followed by `//`. Two letters at least, so that `C://x` stays a Windows path; `//` required, so that a file named `a:b.img` stays a file. */
const OTHER_URL = /^[a-z][a-z0-9+.-]+:\/\//i;

/**
 * Which arguments of a command line are files the user asked Sluice to open: a double-click or
 * "Open with" on Windows and Linux, or `sluice path/to/image.img`. Skipped:
 * - argv[0], the executable (the packaged app's own path);
 * - switches, wherever they are: Electron's second-instance argv has Chromium's own
 *   (--allow-file-access-from-files, --original-process-start-time=…) put before the arguments,
 *   the AppImage adds --no-sandbox, and old macOS passes -psn_…. A file whose name starts with a
 *   dash is opened as ./-name;
 * - the app's path when Electron runs it from one (see CommandLineContext.appInArguments).
 * Linux desktop files pass file:// URLs (%U); they become paths. Relative paths are resolved
 * against the working directory the command ran in, not Sluice's.
 */
export function filesFromCommandLine(argv: readonly string[], context: CommandLineContext): CommandLineFiles {
  const windows = context.platform === 'win32';
  const path = windows ? win32 : posix;
  const result: CommandLineFiles = { files: [], notLocal: [] };
  let appSeen = !context.appInArguments;
  for (const argument of argv.slice(1)) {
    if (argument === '' || argument.startsWith('-')) continue;
    if (!appSeen) {
      appSeen = true;
      continue;
    }
    const local = localPath(argument, windows);
    if (local === null) result.notLocal.push(argument);
    else result.files.push(path.resolve(context.workingDirectory, local));
  }
  return result;
}

/** The argument as a path, or null when it names no file on this computer. */
function localPath(argument: string, windows: boolean): string | null {
  if (OTHER_URL.test(argument) && !FILE_URL.test(argument)) return null;
  if (!FILE_URL.test(argument)) return argument;
  try {
    return fileURLToPath(argument, { windows });
  } catch {
    // A host other than this one on POSIX (file://server/x), or an encoded slash or NUL.
    return null;
  }
}
