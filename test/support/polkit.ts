/**
 * A private polkit for pkexec tests. This machine (and CI) runs no system D-Bus and no polkitd, and
 * starting them for everyone would change the machine for other users. Instead the command runs in
 * new mount and pid namespaces, in which a system bus and polkitd of its own start with:
 * - the shipped action build/polkit/org.sluice.write-disk-image.policy, its exec.path pointed at
 *   the program the test runs as the helper (the packaged launcher's path does not exist here),
 *   next to the machine's own actions;
 * - one rule of the test's for the test user: YES, NO, or AUTH_ADMIN (ask for root's password), for
 *   Sluice's action or for another (`action`: pkexec's generic one for programs no action names).
 * Nothing of it is visible outside, and everything in it dies with the namespace's first process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { scratchDir } from './loop-device.js';
import { TEST_USER } from './unprivileged.js';

export const ACTION_ID = 'org.sluice.write-disk-image';
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
  if (!shipped.includes(PACKAGED_HELPER)) throw new Error(`${SHIPPED_ACTION} no longer names ${PACKAGED_HELPER}`);
  writeFileSync(join(actions, `${ACTION_ID}.policy`), shipped.replace(PACKAGED_HELPER, options.helperProgram));
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
