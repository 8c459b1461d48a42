/**
 * What program the helper is, before any elevation wraps it. See build/HELPER.md for why the
 * packaged app runs the helper with its own Electron binary in Node mode, and what that asks of
 * the Electron fuses.
 */
import { statSync } from 'node:fs';
import { posix, win32 } from 'node:path';
import { errorText } from '../../common/domain/error-details.js';
import { processEntry } from '../../node/process-entries.js';
import { shellQuote } from './elevation/osascript.js';

/**
 * V8 flags for the helper process, measured (1 GiB and 4 GiB raw images, loop device on /dev/shm):
 * the optimizing JIT tiers (Maglev, TurboFan) make an I/O-bound loop no faster but map several MB
 * more of the Node binary as a run gets longer, and a 1 MiB semi-space stops the young generation
 * from growing with the image. With them peak RSS no longer depends on the image size
 * (63.6 MB for 256 MiB, 63.9 MB for 4 GiB; without them 65.6 and 70.3 MB).
 * build/helper/sluice-helper{,.cmd} repeat them for the packaged app (a test keeps them equal).
 */
export const HELPER_V8_FLAGS = ['--max-semi-space-size=1', '--no-opt', '--no-maglev'] as const;

/** The helper's bundle in the build output (privileged/main.ts and what it imports: what root runs, see eslint.config.js). */
export const HELPER_ENTRY = processEntry('helper');

export interface HelperProgram {
  /** An absolute path: pkexec's polkit action and a sudoers rule match it exactly. */
  file: string;
  args: readonly string[];
  /**
   * Environment additions for a direct spawn. sudo, pkexec, osascript and UAC all start the
   * helper with a reset environment, which is why the packaged launcher sets its own.
   */
  env: Readonly<Record<string, string>>;
  /** What root checks in its shell before it runs `file` (osascript only): see macBundleCheck. */
  precondition?: string;
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
export function packagedHelperProgram(
  resourcesPath: string,
  platform: NodeJS.Platform = process.platform,
  macTeamId: string | null = null,
): HelperProgram {
  const file =
    platform === 'win32' ? win32.join(resourcesPath, 'sluice-helper.cmd') : posix.join(resourcesPath, 'sluice-helper');
  if (platform !== 'darwin') return { file, args: [], env: {} };
  return {
    file,
    args: [],
    env: {},
    precondition: macBundleCheck(posix.dirname(posix.dirname(resourcesPath)), macTeamId),
  };
}

/** The exit status of a refused check: not the helper's (it uses 0-5) nor the shell's own. */
export const BUNDLE_CHECK_REFUSED = 77;

/**
 * macOS: root runs the helper launcher and JavaScript from the app bundle, which a drag-install
 * leaves owned by the user, so any of the user's programs could have changed them. Before the
 * elevated shell execs anything from the bundle, it checks, as root:
 * - a signed build (`teamId`, the Apple team that signs releases): `codesign --verify --deep
 *   --strict` against a requirement naming that team, so the whole bundle, app.asar.unpacked
 *   included, is exactly what was signed;
 * - an unsigned (development) build: that nothing in the bundle belongs to anyone but root or is
 *   writable by its group or others, i.e. it runs only from a place only root can change.
 */
export function macBundleCheck(bundle: string, teamId: string | null): string {
  const refuse = (words: string) => `{ echo ${shellQuote(words)} >&2; exit ${BUNDLE_CHECK_REFUSED}; }`;
  if (teamId !== null) {
    if (!/^[A-Z0-9]{10}$/.test(teamId)) throw new Error(`${teamId} is not an Apple team identifier`);
    const requirement = `=anchor apple generic and certificate leaf[subject.OU] = "${teamId}"`;
    return `/usr/bin/codesign --verify --deep --strict -R ${shellQuote(requirement)} ${shellQuote(bundle)} || ${refuse(`${bundle} is not the app its developers signed (codesign --verify failed), so it is not run as administrator. Download Sluice again.`)}`;
  }
  const untrusted = `/usr/bin/find ${shellQuote(bundle)} '(' '!' -user 0 -o -perm -020 -o -perm -002 ')' -print`;
  return `[ -z "$(${untrusted} | /usr/bin/head -n 1)" ] || ${refuse(`This Sluice is an unsigned development build, and ${bundle} is not owned by root alone, so it is not run as administrator: move it where only root can change it (sudo chown -R root:wheel, chmod -R go-w).`)}`;
}

/**
 * Where the helper's entry lies inside the app's resources, relative to them: what
 * build/helper/sluice-helper runs, and what the AppImage's root-side copy finds under its APPDIR.
 */
export const PACKAGED_HELPER_ENTRY = 'resources/app.asar.unpacked/out/run/helper.js';

/**
 * electron-builder's AppRun puts --no-sandbox before every argument where `unshare -Ur true` fails
 * (in a chroot, a container, or with user namespaces off), and Node mode refuses it as a bad option:
 * in a fresh Debian 12 chroot the helper never started ("bad option: --no-sandbox", exit 9). When
 * the arguments hold it already, AppRun adds none; given after `--`, Node hands it to the loader,
 * which drops it.
 */
const NO_SANDBOX = '--no-sandbox';

/**
 * Run by the AppImage as root in Node mode (`-e`): the entry lies inside the AppImage's own mount,
 * whose path (APPDIR) the AppImage runtime chooses afresh for root's run, so no command line can
 * name it in advance. It becomes argv[1], where the helper expects its entry.
 */
const APPIMAGE_HELPER_LOADER = [
  "const { join } = require('node:path');",
  "if (!process.env.APPDIR) { process.stderr.write('sluice-helper: not started by the AppImage runtime (no APPDIR)\\n'); process.exit(1); }",
  `const entry = join(process.env.APPDIR, '${PACKAGED_HELPER_ENTRY}');`,
  `if (process.argv[1] === '${NO_SANDBOX}') process.argv.splice(1, 1);`,
  'process.argv.splice(1, 0, entry);',
  "import(require('node:url').pathToFileURL(entry).href);",
].join(' ');

/**
 * The helper of an app packaged as an AppImage (`appImage` is the AppImage file, $APPIMAGE). The
 * app's files are on a FUSE mount that only the user can read, at a path that changes every run,
 * so root runs the AppImage file itself (as Etcher does): the runtime mounts it again, for root,
 * and the AppRun script starts the app binary, here in Node mode on the helper's entry. The
 * environment is emptied first, as build/helper/sluice-helper does, and PKEXEC_UID (which that
 * empties too) says who the user is, as pkexec would.
 *
 * Root runs whatever that file holds, so it must be a file only its owner (the user, or root) can
 * change: one that its group or anyone can write is refused, as is one another user owns.
 */
export function appImageHelperProgram(appImage: string, uid: number): HelperProgram {
  let stat;
  try {
    stat = statSync(appImage);
  } catch (error) {
    throw new Error(
      `The AppImage ${appImage} cannot be found (${errorText(error)}), so the writing process cannot be started.`,
    );
  }
  if (!stat.isFile())
    throw new Error(`The AppImage ${appImage} is not a regular file, so the writing process cannot be started.`);
  if ((stat.mode & 0o022) !== 0) {
    throw new Error(
      `The AppImage ${appImage} can be changed by other users (mode ${(stat.mode & 0o777).toString(8)}), so Sluice will not run it as administrator. Make it writable by you alone: chmod go-w '${appImage}'.`,
    );
  }
  if (stat.uid !== uid && stat.uid !== 0) {
    throw new Error(
      `The AppImage ${appImage} belongs to another user (uid ${stat.uid}), so Sluice will not run it as administrator.`,
    );
  }
  return {
    file: '/usr/bin/env',
    args: [
      '-i',
      'ELECTRON_RUN_AS_NODE=1',
      `PKEXEC_UID=${uid}`,
      appImage,
      ...HELPER_V8_FLAGS,
      '-e',
      APPIMAGE_HELPER_LOADER,
      '--',
      NO_SANDBOX,
    ],
    env: {},
  };
}
