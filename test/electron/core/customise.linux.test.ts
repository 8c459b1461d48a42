import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { ProfileSchema, type Profile } from '../../../common/domain/customisation.js';
import { sealDraft, sshKeyFiles } from '../../../electron/core/customise.js';
import { SettingsStore } from '../../../electron/core/settings-store.js';
import { glibcCrypt, pythonPsk, sshKeyPair } from '../../support/customisation.js';
import { scratchDir } from '../../support/loop-device.js';

const PASSWORD = `it's "quoted"\nand two lines`;
const PASSPHRASE = `pass "phrase" ünïcode`;
const SSID = 'Café "Zoë" — Lab';

function profile(fields: Partial<Profile> = {}): Profile {
  return v.parse(ProfileSchema, {
    name: 'Classroom',
    hostname: 'pi-{n}',
    user: { name: 'alice' },
    wifi: { ssid: SSID, country: 'DE' },
    ...fields,
  });
}

function sealed(result: ReturnType<typeof sealDraft>): Profile {
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

describe("the Customise form's secrets, sealed in the main process", () => {
  it('hash the password (glibc crypt agrees) and turn the passphrase into the PSK Python derives', () => {
    const out = sealed(sealDraft({ profile: profile(), password: PASSWORD, wifiPassword: PASSPHRASE }));
    const hash = out.user?.passwordHash ?? '';
    expect(hash).toMatch(/^\$6\$/);
    expect(glibcCrypt(PASSWORD, hash)).toBe(hash);
    expect(out.wifi?.psk).toBe(pythonPsk(PASSPHRASE, SSID));
    expect(JSON.stringify(out)).not.toContain('quoted');
    expect(JSON.stringify(out)).not.toContain('phrase');
  });

  it('keep the hash and PSK a profile already holds when nothing new is typed', () => {
    const first = sealed(sealDraft({ profile: profile(), password: PASSWORD, wifiPassword: PASSPHRASE }));
    expect(sealed(sealDraft({ profile: first, password: null, wifiPassword: null }))).toEqual(first);
  });

  it('refuse a password without a user, a passphrase without a network, and one too short, naming the problem', () => {
    expect(sealDraft({ profile: profile({ user: null }), password: 'x', wifiPassword: null })).toMatchObject({
      ok: false,
      error: { message: 'A password needs a user name.' },
    });
    expect(sealDraft({ profile: profile({ wifi: null }), password: null, wifiPassword: 'long enough' })).toMatchObject({
      ok: false,
      error: { code: 'invalid-request' },
    });
    expect(sealDraft({ profile: profile(), password: null, wifiPassword: 'short' })).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining('8 to 63') },
    });
  });

  it('are saved in the settings file as hashes only: neither secret is in it', async () => {
    const dir = scratchDir();
    const file = join(dir, 'settings.json');
    const store = await SettingsStore.open(file);
    const out = sealed(sealDraft({ profile: profile(), password: PASSWORD, wifiPassword: PASSPHRASE }));
    await store.update({ profiles: [out] });
    const text = readFileSync(file, 'utf8');
    for (const secret of [PASSWORD, PASSPHRASE, ...PASSWORD.split('\n'), JSON.stringify(PASSWORD).slice(1, -1)])
      expect(text).not.toContain(secret);
    expect((await SettingsStore.open(file)).get().profiles).toEqual([out]);
  });

  it('refuse two saved profiles of one name', async () => {
    const store = await SettingsStore.open(join(scratchDir(), 'settings.json'));
    await expect(store.update({ profiles: [profile(), profile()] })).rejects.toThrow(/own name/);
  });
});

describe('public keys offered from ~/.ssh', () => {
  it('offer each id_*.pub with its key, say why a bad one is not offered, and never read the private halves', async () => {
    const dir = scratchDir();
    const ssh = join(dir, '.ssh');
    mkdirSync(ssh);
    const ed = sshKeyPair(dir, 'ed25519', 'alice@laptop');
    const rsa = sshKeyPair(dir, 'rsa', 'alice@desktop');
    // ssh-keygen names them by a random suffix here; the import looks for ssh-keygen's own names.
    writeFileSync(join(ssh, 'id_ed25519.pub'), readFileSync(ed.publicKey));
    writeFileSync(join(ssh, 'id_rsa.pub'), readFileSync(rsa.publicKey));
    writeFileSync(join(ssh, 'id_ecdsa.pub'), readFileSync(ed.privateKey));
    writeFileSync(join(ssh, 'id_ed25519'), readFileSync(ed.privateKey));
    const files = await sshKeyFiles(ssh);
    expect(files.map((f) => f.name)).toEqual(['id_ecdsa.pub', 'id_ed25519.pub', 'id_rsa.pub']);
    expect(files[1]).toEqual({
      name: 'id_ed25519.pub',
      keys: [readFileSync(ed.publicKey, 'utf8').trim()],
      problem: null,
    });
    expect(files[2]?.keys[0]).toMatch(/^ssh-rsa .* alice@desktop$/);
    expect(files[0]).toMatchObject({ keys: [], problem: expect.stringContaining('private key') });
  });

  it('offer nothing when there is no ~/.ssh', async () => {
    expect(await sshKeyFiles(join(scratchDir(), 'none'))).toEqual([]);
  });
});
