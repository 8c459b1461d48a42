import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePublicKeys, readPublicKeyFile } from '../../../user/customise/ssh-keys.js';
import { scratchDir } from '../../support/loop-device.js';
import { sshKeyPair } from '../../support/customisation.js';

describe('SSH public keys', () => {
  it('reads the keys ssh-keygen makes, comments and all', async () => {
    const dir = scratchDir();
    const ed = sshKeyPair(dir, 'ed25519', 'alice@laptop "work"');
    const rsa = sshKeyPair(dir, 'rsa');
    expect(await readPublicKeyFile(ed.publicKey)).toEqual([readFileSync(ed.publicKey, 'utf8').trim()]);
    const both = join(dir, 'authorized_keys');
    writeFileSync(both, `# mine\n${readFileSync(ed.publicKey, 'utf8')}\n\n${readFileSync(rsa.publicKey, 'utf8')}`);
    expect(await readPublicKeyFile(both)).toHaveLength(2);
  });

  it('a private key is refused, and says which file to give instead', async () => {
    const { privateKey } = sshKeyPair(scratchDir());
    await expect(readPublicKeyFile(privateKey)).rejects.toThrow(
      /line 1 is not an SSH public key: it is a private key; give the public key \(the \.pub file next to it\)/,
    );
  });

  it('text that only looks like a key is refused', () => {
    const dir = scratchDir();
    const key = readFileSync(sshKeyPair(dir).publicKey, 'utf8').trim();
    const [, blob = ''] = key.split(' ');
    expect(() => parsePublicKeys('hello world', 'f')).toThrow(/not an OpenSSH public key line/);
    // An ed25519 blob under an RSA name.
    expect(() => parsePublicKeys(`ssh-rsa ${blob} x`, 'f')).toThrow(/not a ssh-rsa key/);
    expect(() => parsePublicKeys(`ssh-ed25519 ${blob.slice(0, -4)}A=== x`, 'f')).toThrow(
      /not an OpenSSH public key line|not valid base64/,
    );
    expect(() => parsePublicKeys(`no-pty ${key}`, 'f')).toThrow(/not an OpenSSH public key line/);
    expect(() => parsePublicKeys('\n# only a comment\n', 'f')).toThrow(/holds no SSH public key/);
  });
});
