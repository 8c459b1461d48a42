import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { metaData, networkConfig, userData } from '../../../user/customise/cloud-init.js';
import { scratchDir } from '../../support/loop-device.js';
import {
  cloudInitSchemaProblem,
  fullCustomisation,
  netplanProblem,
  netplanWpaConfig,
  sshKeyPair,
} from '../../support/customisation.js';

describe('cloud-init NoCloud files', () => {
  const dir = scratchDir();
  const keys = [readFileSync(sshKeyPair(dir, 'ed25519', 'a: "b" # c').publicKey, 'utf8').trim()];

  it('user-data passes cloud-init schema and holds the settings as they were given', () => {
    const c = fullCustomisation(keys);
    const text = userData(c);
    expect(text.startsWith('#cloud-config\n')).toBe(true);
    expect(cloudInitSchemaProblem(dir, text)).toBeNull();
    expect(parse(text)).toMatchObject({
      hostname: 'pi-7',
      timezone: 'Europe/Berlin',
      keyboard: { layout: 'de' },
      users: [{ name: 'alice', passwd: c.user?.passwordHash, lock_passwd: false, ssh_authorized_keys: keys }],
      ssh_pwauth: false,
    });
  });

  it('keys without a user go to the default user; an empty customisation is still valid', () => {
    const keysOnly = userData(fullCustomisation(keys, { user: null }));
    expect(cloudInitSchemaProblem(dir, keysOnly)).toBeNull();
    expect(parse(keysOnly)).toMatchObject({ ssh_authorized_keys: keys });
    const none = userData(
      fullCustomisation([], { hostname: null, user: null, ssh: null, wifi: null, timezone: null, keymap: null }),
    );
    expect(cloudInitSchemaProblem(dir, none)).toBeNull();
  });

  it('network-config is netplan version 2 that netplan accepts, with the non-ASCII SSID and its key intact', () => {
    const text = networkConfig(fullCustomisation(keys)) ?? '';
    expect(netplanProblem(dir, text)).toBeNull();
    const wifi = parse(text).network.wifis.wlan0;
    expect(wifi['regulatory-domain']).toBe('DE');
    expect(wifi['access-points']['Café "Zoë" — 5 GHz']).toEqual({ password: '0f'.repeat(32), hidden: true });
    expect(netplanWpaConfig(dir, text)).toContain(`psk=${'0f'.repeat(32)}`);
    expect(networkConfig(fullCustomisation(keys, { wifi: null }))).toBeNull();
    const open =
      networkConfig(fullCustomisation([], { wifi: { ssid: 'open', psk: null, hidden: false, country: 'GB' } })) ?? '';
    expect(netplanProblem(dir, open)).toBeNull();
  });

  it("a user's own files replace Sluice's, byte for byte", () => {
    const own = fullCustomisation(keys, {
      cloudInitUserData: '#cloud-config\nruncmd: [ls]\n',
      cloudInitNetworkConfig: 'version: 2\n',
    });
    expect(userData(own)).toBe('#cloud-config\nruncmd: [ls]\n');
    expect(networkConfig(own)).toBe('version: 2\n');
  });

  it('meta-data names an instance drawn from the settings: the same settings give the same bytes', () => {
    const c = fullCustomisation(keys);
    const first = metaData(c, userData(c), networkConfig(c));
    expect(metaData(c, userData(c), networkConfig(c))).toBe(first);
    expect(parse(first)).toMatchObject({ 'local-hostname': 'pi-7' });
    const other = fullCustomisation(keys, { timezone: 'UTC' });
    expect(metaData(other, userData(other), networkConfig(other))).not.toBe(first);
  });
});
