import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIRSTRUN_REPORT, firstRunArguments, firstRunScript } from '../../../user/customise/firstrun.js';
import { withArguments } from '../../../user/customise/cmdline.js';
import { scratchDir } from '../../support/loop-device.js';
import { checkShellScript, fullCustomisation, sshKeyPair } from '../../support/customisation.js';
import type { Customisation } from '../../../common/domain/customisation.js';

const IMAGER_CUSTOM = '/usr/lib/raspberrypi-sys-mods/imager_custom';
const USERCONF = '/usr/lib/userconf-pi/userconf';

/**
 * Each call of a stub: its name and arguments, as the shell passed them. The script runs as
 * firstrun.sh in `boot` (a scratch directory unless given); a stub fails for the first argument `fail`.
 */
function runWithStubs(script: string, dir: string, boot = scratchDir(), fail = '-'): string[][] {
  const log = join(dir, 'calls');
  const stub = (name: string) => {
    const path = join(dir, name);
    writeFileSync(
      path,
      `#!/bin/bash\n{ printf '%s\\0' ${name} "$@"; printf '\\1\\0'; } >>${log}\n[ "$1" != ${fail} ]\n`,
    );
    chmodSync(path, 0o755);
    return path;
  };
  const path = join(boot, 'firstrun.sh');
  if (!existsSync(join(boot, 'cmdline.txt'))) writeFileSync(join(boot, 'cmdline.txt'), 'root=x\n');
  writeFileSync(path, script.replaceAll(IMAGER_CUSTOM, stub('imager_custom')).replaceAll(USERCONF, stub('userconf')));
  execFileSync('bash', [path]);
  const calls: string[][] = [];
  let call: string[] = [];
  for (const field of readFileSync(log, 'latin1').split('\0').slice(0, -1)) {
    if (field === '\u0001') calls.push(call.map((f) => Buffer.from(f, 'latin1').toString('utf8')));
    call = field === '\u0001' ? [] : [...call, field];
  }
  return calls;
}

describe('firstrun.sh', () => {
  const dir = scratchDir();
  const keys = [
    readFileSync(sshKeyPair(dir, 'ed25519', `o'brien "laptop"`).publicKey, 'utf8').trim(),
    readFileSync(sshKeyPair(dir, 'rsa').publicKey, 'utf8').trim(),
  ];
  const variants: [string, Customisation][] = [
    ['every setting', fullCustomisation(keys)],
    ['host name only', fullCustomisation([], { user: null, ssh: null, wifi: null, timezone: null, keymap: null })],
    [
      'password login, open network, no locale',
      fullCustomisation([], {
        ssh: { passwordAuth: true, authorizedKeys: [] },
        wifi: { ssid: 'x', psk: null, hidden: false, country: 'GB' },
        keymap: null,
      }),
    ],
    [
      'a user without a password',
      fullCustomisation(keys, { user: { name: 'bob', passwordHash: null }, hostname: null }),
    ],
    ['growing the root', fullCustomisation(keys, { growRoot: true })],
  ];

  it.each(variants)('%s: bash -n and shellcheck find nothing', (_name, c) => {
    expect(checkShellScript(scratchDir(), firstRunScript(c))).toEqual([]);
  });

  it('hands every value to imager_custom and userconf exactly, then removes itself and its arguments', () => {
    const boot = scratchDir();
    const c = fullCustomisation(keys);
    const script = firstRunScript(c);
    writeFileSync(
      join(boot, 'cmdline.txt'),
      withArguments('console=tty1 root=PARTUUID=abc-02 rootwait\n', firstRunArguments()),
    );
    const calls = runWithStubs(script, scratchDir(), boot);
    // The user first: enable_ssh puts the keys into the home of the user userconf made or renamed.
    expect(calls).toEqual([
      ['imager_custom', 'set_hostname', 'pi-7'],
      ['userconf', 'alice', c.user?.passwordHash ?? ''],
      ['imager_custom', 'enable_ssh', '-k', ...keys],
      ['imager_custom', 'set_wlan', '-h', 'Café "Zoë" — 5 GHz', '0f'.repeat(32), 'DE'],
      ['imager_custom', 'set_timezone', 'Europe/Berlin'],
      ['imager_custom', 'set_keymap', 'de'],
    ]);
    expect(existsSync(join(boot, 'firstrun.sh'))).toBe(false);
    expect(readFileSync(join(boot, 'cmdline.txt'), 'utf8')).toBe('console=tty1 root=PARTUUID=abc-02 rootwait\n');
  });

  it('an SSID with a single quote survives the shell', () => {
    const c = fullCustomisation([], {
      wifi: { ssid: `it's ok`, psk: null, hidden: false, country: 'US' },
      hostname: null,
      user: null,
      ssh: null,
      keymap: null,
      timezone: null,
    });
    expect(runWithStubs(firstRunScript(c), scratchDir())).toEqual([['imager_custom', 'set_wlan', `it's ok`, '', 'US']]);
  });

  it('the fallback for images without imager_custom names the network by its bytes in hex', () => {
    const script = firstRunScript(fullCustomisation(keys));
    expect(script).toContain(`\tssid=${Buffer.from('Café "Zoë" — 5 GHz').toString('hex')}\n`);
    expect(script).toContain(`\tpsk=${'0f'.repeat(32)}\n`);
    expect(script).toContain(`rm -f "$BOOT/firstrun.sh"\nsed -i 's| systemd.run.*||g' "$BOOT/cmdline.txt"\n`);
  });

  it('a step that fails stops alone: the others apply, and the report on the boot partition names it, with no value', () => {
    const boot = scratchDir();
    const c = fullCustomisation(keys);
    const calls = runWithStubs(firstRunScript(c), scratchDir(), boot, 'set_wlan');
    expect(calls.map((call) => call[1])).toEqual([
      'set_hostname',
      'alice',
      'enable_ssh',
      'set_wlan',
      'set_timezone',
      'set_keymap',
    ]);
    const report = readFileSync(join(boot, FIRSTRUN_REPORT), 'utf8');
    expect(report).toMatch(
      /^Sluice first boot: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\napplied hostname\napplied user\napplied ssh\nFAILED wifi \(exit status 1; the journal of this boot has its output\)\napplied timezone\napplied keymap\n$/,
    );
    expect(existsSync(join(boot, 'firstrun.sh'))).toBe(false);
  });

  it('the command line runs the script from /boot/firmware or /boot, wherever it is, and never powers the card off', () => {
    const [run, ...rest] = firstRunArguments();
    expect(rest).toEqual([
      'systemd.run_success_action=reboot',
      'systemd.run_failure_action=none',
      'systemd.unit=kernel-command-line.target',
    ]);
    // What systemd runs: the value without its double quotes, as a shell command (ExecStart= unquotes the single quotes the same way).
    const command = /^systemd\.run="\/bin\/sh -c '(.*)'"$/.exec(run ?? '')?.[1] ?? '';
    expect(command).not.toMatch(/[$;%]/);
    for (const dir of ['/boot/firmware', '/boot']) {
      const root = scratchDir();
      execFileSync('mkdir', ['-p', `${root}${dir}`]);
      writeFileSync(`${root}${dir}/firstrun.sh`, 'echo ran "$0"\n');
      const out = execFileSync('sh', ['-c', command.replaceAll('/boot', `${root}/boot`)], { encoding: 'utf8' });
      expect(out).toBe(`ran ${root}${dir}/firstrun.sh\n`);
    }
    expect(withArguments(`root=x ${run ?? ''} quiet\n`, [run ?? ''])).toBe(`root=x quiet ${run ?? ''}\n`);
  });
});
