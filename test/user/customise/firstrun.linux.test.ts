import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { firstRunArguments, firstRunScript } from '../../../user/customise/firstrun.js';
import { withArguments } from '../../../user/customise/cmdline.js';
import { scratchDir } from '../../support/loop-device.js';
import { checkShellScript, fullCustomisation, sshKeyPair } from '../../support/customisation.js';
import type { Customisation } from '../../../common/domain/customisation.js';

const IMAGER_CUSTOM = '/usr/lib/raspberrypi-sys-mods/imager_custom';
const USERCONF = '/usr/lib/userconf-pi/userconf';

/** Each call of a stub: its name and arguments, as the shell passed them. */
function runWithStubs(script: string, dir: string): string[][] {
  const log = join(dir, 'calls');
  const stub = (name: string) => {
    const path = join(dir, name);
    writeFileSync(path, `#!/bin/bash\n{ printf '%s\\0' ${name} "$@"; printf '\\1\\0'; } >>${log}\n`);
    chmodSync(path, 0o755);
    return path;
  };
  const path = join(dir, 'run.sh');
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
  const keys = [readFileSync(sshKeyPair(dir, 'ed25519', `o'brien "laptop"`).publicKey, 'utf8').trim(), readFileSync(sshKeyPair(dir, 'rsa').publicKey, 'utf8').trim()];
  const variants: [string, Customisation][] = [
    ['every setting', fullCustomisation(keys)],
    ['host name only', fullCustomisation([], { user: null, ssh: null, wifi: null, timezone: null, keymap: null })],
    ['password login, open network, no locale', fullCustomisation([], { ssh: { passwordAuth: true, authorizedKeys: [] }, wifi: { ssid: 'x', psk: null, hidden: false, country: 'GB' }, keymap: null })],
    ['a user without a password', fullCustomisation(keys, { user: { name: 'bob', passwordHash: null }, hostname: null })],
  ];

  it.each(variants)('%s: bash -n and shellcheck find nothing', (_name, c) => {
    expect(checkShellScript(scratchDir(), firstRunScript(c, '/boot/firmware'))).toEqual([]);
  });

  it('hands every value to imager_custom and userconf exactly, then removes itself and its arguments', () => {
    const boot = scratchDir();
    const c = fullCustomisation(keys);
    const script = firstRunScript(c, boot);
    writeFileSync(join(boot, 'firstrun.sh'), script);
    writeFileSync(join(boot, 'cmdline.txt'), withArguments('console=tty1 root=PARTUUID=abc-02 rootwait\n', firstRunArguments(boot)));
    const calls = runWithStubs(script, scratchDir());
    expect(calls).toEqual([
      ['imager_custom', 'set_hostname', 'pi-7'],
      ['imager_custom', 'enable_ssh', '-k', ...keys],
      ['userconf', 'alice', c.user?.passwordHash ?? ''],
      ['imager_custom', 'set_wlan', '-h', 'Café "Zoë" — 5 GHz', '0f'.repeat(32), 'DE'],
      ['imager_custom', 'set_keymap', 'de'],
      ['imager_custom', 'set_timezone', 'Europe/Berlin'],
    ]);
    expect(existsSync(join(boot, 'firstrun.sh'))).toBe(false);
    expect(readFileSync(join(boot, 'cmdline.txt'), 'utf8')).toBe('console=tty1 root=PARTUUID=abc-02 rootwait\n');
  });

  it('an SSID with a single quote survives the shell', () => {
    const c = fullCustomisation([], { wifi: { ssid: `it's ok`, psk: null, hidden: false, country: 'US' }, hostname: null, user: null, ssh: null, keymap: null, timezone: null });
    expect(runWithStubs(firstRunScript(c, scratchDir()), scratchDir())).toEqual([['imager_custom', 'set_wlan', `it's ok`, '', 'US']]);
  });

  it('the fallback for images without imager_custom names the network by its bytes in hex', () => {
    const script = firstRunScript(fullCustomisation(keys), '/boot');
    expect(script).toContain(`\tssid=${Buffer.from('Café "Zoë" — 5 GHz').toString('hex')}\n`);
    expect(script).toContain(`\tpsk=${'0f'.repeat(32)}\n`);
    expect(script).toContain(`rm -f /boot/firstrun.sh\nsed -i 's| systemd.run.*||g' /boot/cmdline.txt\n`);
  });
});
