import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hashPassword, readSecretFile, wifiPsk } from '../../../user/customise/secrets.js';
import { scratchDir } from '../../support/loop-device.js';
import { glibcCrypt, pythonPsk } from '../../support/customisation.js';
import { PasswordHash } from '../../../common/domain/customisation.js';
import * as v from 'valibot';

describe('passwords', () => {
  it('a password with quotes, a backslash and line breaks is read whole and hashed as glibc crypt(3) hashes it', async () => {
    const password = `it's "quoted"\\ and\nspans\r\nlines `;
    const file = join(scratchDir(), 'password');
    writeFileSync(file, `${password}\n`);
    const read = await readSecretFile(file, 'password');
    expect(read).toBe(password);
    const hash = hashPassword(read);
    expect(v.is(PasswordHash, hash)).toBe(true);
    expect(glibcCrypt(password, hash)).toBe(hash);
    expect(hash).not.toContain('quoted');
  });

  it('each hash gets its own salt', () => {
    expect(hashPassword('same')).not.toBe(hashPassword('same'));
  });

  it('an empty or oversized file is refused with its name', async () => {
    const dir = scratchDir();
    writeFileSync(join(dir, 'empty'), '\n');
    writeFileSync(join(dir, 'big'), 'x'.repeat(5000));
    await expect(readSecretFile(join(dir, 'empty'), 'password')).rejects.toThrow(/empty/);
    await expect(readSecretFile(join(dir, 'big'), 'password')).rejects.toThrow(/larger than 4096 bytes/);
    await expect(readSecretFile(join(dir, 'missing'), 'Wi-Fi password')).rejects.toThrow(
      /Wi-Fi password file .*missing cannot be read/,
    );
  });
});

describe('Wi-Fi keys', () => {
  it('the PSK of a passphrase with quotes, for a non-ASCII SSID, is what hashlib derives', () => {
    const ssid = 'Café "Zoë" — 5 GHz';
    const passphrase = `pa"ss' wörd\\`;
    expect(wifiPsk(passphrase, ssid)).toBe(pythonPsk(passphrase, ssid));
  });

  it('a 64-digit hex passphrase is already the key', () => {
    expect(wifiPsk('AB'.repeat(32), 'x')).toBe('ab'.repeat(32));
  });

  it('passphrases WPA cannot take are refused', () => {
    expect(() => wifiPsk('short', 'x')).toThrow(/8 to 63 characters/);
    expect(() => wifiPsk('x'.repeat(64), 'x')).toThrow(/8 to 63 characters/);
    expect(() => wifiPsk('line\nbreak', 'x')).toThrow(/control characters/);
  });
});
