import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { preseedToml, tomlString } from '../../../user/customise/preseed.js';
import { scratchDir } from '../../support/loop-device.js';
import { fullCustomisation, parseToml, sshKeyPair } from '../../support/customisation.js';

describe('rpi-preseed.toml', () => {
  it('Python tomllib reads back every setting as given, with the hash and the PSK marked encrypted', () => {
    const keys = [readFileSync(sshKeyPair(scratchDir(), 'ed25519', 'x "y" \\ z').publicKey, 'utf8').trim()];
    const c = fullCustomisation(keys);
    expect(parseToml(preseedToml(c))).toEqual({
      config_version: '1.0',
      system: { hostname: 'pi-7' },
      user: { name: 'alice', password: c.user?.passwordHash, password_encrypted: true },
      ssh: { enabled: true, password_authentication: false, authorized_keys: keys },
      wlan: {
        ssid: 'Café "Zoë" — 5 GHz',
        password: '0f'.repeat(32),
        password_encrypted: true,
        key_mgmt: 'wpa-psk',
        hidden: true,
        country: 'DE',
      },
      locale: { keymap: 'de', timezone: 'Europe/Berlin' },
    });
  });

  it('strings with every kind of escape round-trip', () => {
    const nasty = 'q"u\\o\te\nd\r\u0001\u007f☕';
    expect(parseToml(`v = ${tomlString(nasty)}\n`)).toEqual({ v: nasty });
  });
});
