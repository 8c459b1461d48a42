/**
 * A private polkit for pkexec tests. This machine (and CI) runs no system D-Bus and no polkitd, and
 * starting them for everyone would change the machine for other users. Instead the command runs in
 * new mount and pid namespaces, in which a system bus and polkitd of its own start with:
 * - the shipped actions of build/polkit/org.sluice.write-disk-image.policy, their exec.path
 *   pointed at the program the test runs as the helper (the packaged launcher's path does not exist
 *   here), next to the machine's own actions. They match on the helper's mode too (exec.argv1,
 *   `--write` or `--read-only`), which is the launcher's first argument. Where the program is Node
 *   itself (the CLI's helper, builtHelper()), its first argument is a V8 flag instead, so the write
 *   action is matched on that flag and the read action matches nothing: prompts for reading are
 *   tested with the packaged launcher (packagedLayout);
 * - one rule of the test's for the test user: YES, NO, or AUTH_ADMIN (ask for root's password), for
 *   Sluice's action or for another (`action`: pkexec's generic one for programs no action names).
 * Nothing of it is visible outside, and everything in it dies with the namespace's first process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { scratchDir } from './loop-device.js';
import { TEST_USER } from './unprivileged.js';
import { HELPER_V8_FLAGS } from '../../user/launcher/helper-program.js';

export const ACTION_ID = 'org.sluice.write-disk-image';
export const READ_ACTION_ID = 'org.sluice.read-drive';
const WRITE_ARGV1 = '<annotate key="org.freedesktop.policykit.exec.argv1">--write</annotate>';
const SHIPPED_ACTION = resolve('build/polkit/org.sluice.write-disk-image.policy');
const PACKAGED_HELPER = '/opt/Sluice/resources/sluice-helper';

/** Runs in the namespaces as their first process (pid 1): sets up, waits for polkitd, runs the command. */
const SETUP = `
set -eu
actions=$1 rules=$2
shift 2
mount -t tmpfs tmpfs /run/dbus
mount --bind "$actions" /usr/share/polkit-1/actions
mount --bind "$rules" /etc/polkit-1/rules.d
dbus-daemon --system --fork --nopidfile
/usr/lib/polkit-1/polkitd --no-debug >/dev/null 2>&1 &
for i in $(seq 200); do
  dbus-send --system --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.NameHasOwner string:org.freedesktop.PolicyKit1 2>/dev/null | grep -q 'boolean true' && break
  sleep 0.05
done
set +e
# Not exec: pkexec refuses a parent of pid 1, and this shell must outlive the command.
"$@"
`;

export type PolkitAnswer = 'YES' | 'NO' | 'AUTH_ADMIN';

/** The helper's first argument, as pkexec sees it: Node's first V8 flag when the program is Node itself. */
function writeArgv1(program: string): string {
  return program === process.execPath ? HELPER_V8_FLAGS[0] : '--write';
}

/** Starts `command` with a private polkit that answers `answer` for the test user; stdin is a pipe. */
export function spawnWithPolkit(
  command: readonly string[],
  options: { helperProgram: string; answer: PolkitAnswer; action?: string },
): ChildProcess {
  const dir = scratchDir();
  const actions = join(dir, 'actions');
  const rules = join(dir, 'rules');
  mkdirSync(rules);
  cpSync('/usr/share/polkit-1/actions', actions, { recursive: true });
  const shipped = readFileSync(SHIPPED_ACTION, 'utf8');
  if (!shipped.includes(PACKAGED_HELPER) || !shipped.includes(WRITE_ARGV1))
    throw new Error(`${SHIPPED_ACTION} no longer names ${PACKAGED_HELPER} and ${WRITE_ARGV1}`);
  const policy = shipped
    .replaceAll(PACKAGED_HELPER, options.helperProgram)
    .replace(WRITE_ARGV1, WRITE_ARGV1.replace('--write', writeArgv1(options.helperProgram)));
  writeFileSync(join(actions, `${ACTION_ID}.policy`), policy);
  writeFileSync(
    join(rules, '10-sluice-test.rules'),
    `polkit.addRule(function (action, subject) {
  if (action.id === '${options.action ?? ACTION_ID}' && subject.user === '${TEST_USER}') return polkit.Result.${options.answer};
});\n`,
  );
  return spawn(
    'unshare',
    [
      '--mount',
      '--propagation',
      'private',
      '--pid',
      '--fork',
      '--mount-proc',
      'sh',
      '-c',
      SETUP,
      'sh',
      actions,
      rules,
      ...command,
    ],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
}

/**
 * The packaged app's resources, as the deb and rpm install them, in a scratch directory: the
 * shipped launcher build/helper/sluice-helper, which runs `../sluice` (here this very Node, which
 * ignores ELECTRON_RUN_AS_NODE) on app.asar.unpacked/out/run/helper.js (here the build's out/run).
 * Returns the resources directory: user/launcher/helper-program.ts packagedHelperProgram finds the
 * launcher in it, and spawnWithPolkit's helperProgram is that launcher.
 */
export function packagedLayout(): string {
  const app = scratchDir();
  const resources = join(app, 'resources');
  mkdirSync(join(resources, 'app.asar.unpacked/out'), { recursive: true });
  symlinkSync(process.execPath, join(app, 'sluice'));
  symlinkSync(resolve('out/run'), join(resources, 'app.asar.unpacked/out/run'));
  copyFileSync(resolve('build/helper/sluice-helper'), join(resources, 'sluice-helper'));
  chmodSync(join(resources, 'sluice-helper'), 0o755);
  chmodSync(app, 0o755);
  return resources;
}
