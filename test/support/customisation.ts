/**
 * Customisation fixtures and the field's own checkers for what Sluice writes: bash -n and
 * shellcheck for firstrun.sh, cloud-init's schema for user-data, netplan for network-config, and
 * Python's tomllib for rpi-preseed.toml. Keys are made by ssh-keygen, hashes checked by glibc's
 * crypt (through perl), PSKs by Python's hashlib: none of Sluice's own code checks itself.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Customisation } from '../../common/domain/customisation.js';
import type { ReadAt } from '../../node/read-at.js';
import { cached } from './fixture-cache.js';
import { readBytes } from './loop-device.js';

/** Debian's own Python (cloud-init's and tomllib's), not whatever python3 comes first on PATH. */
export const SYSTEM_PYTHON = '/usr/bin/python3';

/** A fresh OpenSSH key pair in `dir`; returns the paths of both halves. */
export function sshKeyPair(
  dir: string,
  type: 'ed25519' | 'rsa' = 'ed25519',
  comment = 'tester@sluice',
): { privateKey: string; publicKey: string } {
  const privateKey = join(dir, `id_${type}_${Math.random().toString(36).slice(2)}`);
  execFileSync('ssh-keygen', [
    '-q',
    '-t',
    type,
    ...(type === 'rsa' ? ['-b', '2048'] : []),
    '-N',
    '',
    '-C',
    comment,
    '-f',
    privateKey,
  ]);
  return { privateKey, publicKey: `${privateKey}.pub` };
}

/**
 * The public halves of `count` RSA keys, a lab's (student-<i>@lab), in a fixed order. They are made
 * once per machine and kept (fixture-cache.ts): ssh-keygen spends up to a second of a loaded
 * core on each, and what a test needs of them is only that they are real keys, and their length.
 */
export function labPublicKeys(count: number): string[] {
  const dir = cached(`lab-keys-rsa-${count}-v1`, (work) => {
    for (let i = 0; i < count; i++) rmSync(sshKeyPair(work, 'rsa', `student-${i}@lab`).privateKey);
  });
  return readdirSync(dir)
    .filter((name) => name.endsWith('.pub'))
    .sort()
    .map((name) => readFileSync(join(dir, name), 'utf8').trim());
}

/** glibc's crypt(3) of `password` with the salt of `hash`: equal to `hash` when it is that password's. */
export function glibcCrypt(password: string, hash: string): string {
  const salt = hash.split('$').slice(0, 3).join('$');
  return execFileSync('perl', ['-e', 'print crypt($ENV{SLUICE_PASSWORD}, $ENV{SLUICE_SALT})'], {
    env: { ...process.env, SLUICE_PASSWORD: password, SLUICE_SALT: salt },
  }).toString();
}

/** The WPA PSK as Python's hashlib derives it. */
export function pythonPsk(passphrase: string, ssid: string): string {
  const script =
    'import hashlib,os;print(hashlib.pbkdf2_hmac("sha1",os.environb[b"P"],os.environb[b"S"],4096,32).hex())';
  return execFileSync(SYSTEM_PYTHON, ['-c', script], { env: { ...process.env, P: passphrase, S: ssid } })
    .toString()
    .trim();
}

/** bash -n and shellcheck on a script; returns their complaints, empty when there are none. */
export function checkShellScript(dir: string, script: string): string[] {
  const path = join(dir, 'firstrun.sh');
  writeFileSync(path, script);
  const problems: string[] = [];
  const syntax = spawnSync('bash', ['-n', path], { encoding: 'utf8' });
  if (syntax.status !== 0) problems.push(`bash -n: ${syntax.stderr}`);
  const lint = spawnSync('shellcheck', ['--shell=bash', path], { encoding: 'utf8' });
  if (lint.status !== 0) problems.push(`shellcheck: ${lint.stdout}${lint.stderr}`);
  return problems;
}

/** cloud-init's own schema check of a user-data; returns its complaint, or null when it is valid. */
export function cloudInitSchemaProblem(dir: string, userData: string): string | null {
  const path = join(dir, 'user-data');
  writeFileSync(path, userData);
  const run = spawnSync('cloud-init', ['schema', '--config-file', path], { encoding: 'utf8' });
  return run.status === 0 && /Valid cloud-config/.test(run.stdout) ? null : `${run.stdout}${run.stderr}`;
}

/** netplan's own parse of a network-config (netplan generate in a root of its own); its complaint, or null. */
export function netplanProblem(dir: string, networkConfig: string): string | null {
  const root = join(dir, `netplan-${Math.random().toString(36).slice(2)}`);
  mkdirSync(join(root, 'etc', 'netplan'), { recursive: true });
  const file = join(root, 'etc', 'netplan', '50-cloud-init.yaml');
  writeFileSync(file, networkConfig);
  chmodSync(file, 0o600);
  const run = spawnSync('netplan', ['generate', '--root-dir', root], { encoding: 'utf8' });
  return run.status === 0 ? null : `${run.stdout}${run.stderr}`;
}

/** What netplan made of the Wi-Fi: the wpa_supplicant file it generates for wlan0. */
export function netplanWpaConfig(dir: string, networkConfig: string): string {
  const root = join(dir, `netplan-${Math.random().toString(36).slice(2)}`);
  mkdirSync(join(root, 'etc', 'netplan'), { recursive: true });
  const file = join(root, 'etc', 'netplan', '50-cloud-init.yaml');
  writeFileSync(file, networkConfig);
  chmodSync(file, 0o600);
  execFileSync('netplan', ['generate', '--root-dir', root]);
  return readFileSync(join(root, 'run', 'netplan', 'wpa-wlan0.conf'), 'utf8');
}

/** A TOML document as Python's tomllib reads it. */
export function parseToml(text: string): unknown {
  const script = 'import tomllib,json,sys;print(json.dumps(tomllib.loads(sys.stdin.read())))';
  return JSON.parse(execFileSync(SYSTEM_PYTHON, ['-c', script], { input: text }).toString()) as unknown;
}

/** Every setting given, with values that test quoting: a non-ASCII SSID with quotes, keys with comments. */
export function fullCustomisation(keys: string[], overrides: Partial<Customisation> = {}): Customisation {
  return {
    hostname: 'pi-7',
    user: {
      name: 'alice',
      passwordHash:
        '$6$abcdefghijklmnop$CWZE0Chchzv81JL4X7YJDXBQrR2R7FOFshH3DFZSnktu1MlfWCQFaarTUiu9HFWLKQwtd9RbPGkcQCtVPo55v1',
    },
    ssh: { passwordAuth: false, authorizedKeys: keys },
    wifi: { ssid: 'Café "Zoë" — 5 GHz', psk: '0f'.repeat(32), hidden: true, country: 'DE' },
    timezone: 'Europe/Berlin',
    keymap: 'de',
    firstRunScript: null,
    cloudInitUserData: null,
    cloudInitNetworkConfig: null,
    // Not by default: a boot test's card is the image's size, with nothing to grow.
    growRoot: null,
    ...overrides,
  };
}

/** A ReadAt over a file (an image, a volume), as the probe's readers take one. */
export function fileReader(path: string): ReadAt {
  return async (offset, length) => readBytes(path, offset, length);
}
