/**
 * The customisation flags of `sluice flash` and `sluice verify`, turned into each
 * card's settings. The names are fixed so that scripts can rely on them; the last three are
 * rpi-imager --cli's. Passwords are read from files and hashed here at once
 * (user/customise/secrets.ts): none is ever on the command line, where other users could see it.
 */
import { readFile } from 'node:fs/promises';
import * as v from 'valibot';
import { ProfileSchema, type Profile } from '../common/domain/customisation.js';
import { errorText } from '../common/domain/error-details.js';
import { jobError } from '../common/domain/failure.js';
import { hashPassword, readSecretFile, wifiPsk } from '../user/customise/secrets.js';
import { readPublicKeyFile } from '../user/customise/ssh-keys.js';
import type { CustomiseFlags } from './customise-flags.js';

async function readText(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw jobError('invalid-request', `The ${what} ${path} cannot be read: ${errorText(error)}.`);
  }
}

/** A profile file (--customise): the schema of a saved profile, checked. */
async function readProfile(path: string): Promise<Profile> {
  let json: unknown;
  try {
    json = JSON.parse(await readText(path, 'profile'));
  } catch (error) {
    if (error instanceof SyntaxError)
      throw jobError('invalid-request', `The profile ${path} is not JSON: ${error.message}.`);
    throw error;
  }
  const parsed = v.safeParse(ProfileSchema, json);
  if (!parsed.success)
    throw jobError(
      'invalid-request',
      `The profile ${path} does not fit: ${parsed.issues.map((i) => `${v.getDotPath(i) ?? 'it'}: ${i.message}`).join('; ')}.`,
    );
  return parsed.output;
}

/**
 * The profile the flags describe: a --customise file with each flag given taking the place of its
 * setting. Throws invalid-request, naming the flag, for a value that does not fit.
 */
export async function profileFromFlags(flags: CustomiseFlags): Promise<Profile> {
  const base = flags.customise === undefined ? v.parse(ProfileSchema, {}) : await readProfile(flags.customise);
  const patch: Record<string, unknown> = {};
  if (flags.hostname !== undefined) patch['hostname'] = flags.hostname;
  if (flags.user !== undefined) {
    const password =
      flags['password-file'] === undefined ? null : await readSecretFile(flags['password-file'], 'password');
    patch['user'] = { name: flags.user, passwordHash: password === null ? null : hashPassword(password) };
  }
  const keyFiles = flags['ssh-key'] ?? [];
  if (keyFiles.length > 0 || flags['ssh-password'] === true) {
    const keys: string[] = [];
    for (const file of keyFiles) keys.push(...(await readPublicKeyFile(file)));
    patch['ssh'] = { passwordAuth: flags['ssh-password'] === true, authorizedKeys: keys };
  }
  const ssid = flags['wifi-ssid'];
  if (ssid !== undefined) {
    const passphrase =
      flags['wifi-password-file'] === undefined
        ? null
        : await readSecretFile(flags['wifi-password-file'], 'Wi-Fi password');
    patch['wifi'] = {
      ssid,
      psk: passphrase === null ? null : wifiPsk(passphrase, ssid),
      hidden: flags['wifi-hidden'] === true,
      country: flags['wifi-country'],
    };
  }
  if (flags.timezone !== undefined) patch['timezone'] = flags.timezone;
  if (flags.keymap !== undefined) patch['keymap'] = flags.keymap;
  if (flags['first-run-script'] !== undefined)
    patch['firstRunScript'] = await readText(flags['first-run-script'], 'first-run script');
  if (flags['cloudinit-userdata'] !== undefined)
    patch['cloudInitUserData'] = await readText(flags['cloudinit-userdata'], 'cloud-init user-data');
  if (flags['cloudinit-networkconfig'] !== undefined)
    patch['cloudInitNetworkConfig'] = await readText(flags['cloudinit-networkconfig'], 'cloud-init network-config');
  if (flags['grow-root'] === true) patch['growRoot'] = true;
  const parsed = v.safeParse(ProfileSchema, { ...base, ...patch });
  if (!parsed.success)
    throw jobError('invalid-request', parsed.issues.map((i) => `${flagOf(v.getDotPath(i))}: ${i.message}`).join('; '));
  return parsed.output;
}

/** The flag a profile field comes from, for messages. */
function flagOf(path: string | null): string {
  const field = path?.split('.')[0] ?? '';
  const flags: Record<string, string> = {
    hostname: '--hostname',
    user: '--user',
    ssh: '--ssh-key',
    wifi: '--wifi-ssid/--wifi-country',
    timezone: '--timezone',
    keymap: '--keymap',
  };
  return flags[field] ?? path ?? 'the settings';
}
