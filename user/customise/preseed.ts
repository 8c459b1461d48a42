/**
 * rpi-preseed.toml for the Raspberry Pi OS releases that ship rpi-preseed (raspberrypi/rpi-preseed,
 * rpi-preseed(5)): it reads this file from the boot partition on the first boot. The password and
 * the Wi-Fi key are written as their hash and PSK with password_encrypted = true, so neither is
 * in clear on the card.
 */
import type { Customisation } from '../../common/domain/customisation.js';

/** The format version this file follows: its major must match rpi-preseed's. */
const CONFIG_VERSION = '1.0';

/** A TOML basic string: quotes, backslashes and control characters escaped. */
export function tomlString(value: string): string {
  let out = '"';
  for (const ch of value) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (code < 0x20 || code === 0x7f) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

type TomlValue = string | boolean | string[];

function tomlValue(value: TomlValue): string {
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map(tomlString).join(', ')}]`;
  return tomlString(value);
}

function table(name: string, entries: Record<string, TomlValue>): string {
  return [`[${name}]`, ...Object.entries(entries).map(([key, value]) => `${key} = ${tomlValue(value)}`), ''].join('\n');
}

/** The rpi-preseed.toml Sluice writes for `c`. */
export function preseedToml(c: Customisation): string {
  const parts = [
    '# Written by Sluice: applied once by rpi-preseed on the first boot (see rpi-preseed(5)).',
    `config_version = ${tomlString(CONFIG_VERSION)}`,
    '',
  ];
  if (c.hostname !== null) parts.push(table('system', { hostname: c.hostname }));
  if (c.user !== null) {
    parts.push(
      table('user', {
        name: c.user.name,
        ...(c.user.passwordHash === null ? {} : { password: c.user.passwordHash, password_encrypted: true }),
      }),
    );
  }
  if (c.ssh !== null) {
    const keys = c.ssh.authorizedKeys;
    parts.push(
      table('ssh', {
        enabled: true,
        password_authentication: c.ssh.passwordAuth || keys.length === 0,
        ...(keys.length > 0 ? { authorized_keys: keys } : {}),
      }),
    );
  }
  if (c.wifi !== null) {
    const security: Record<string, TomlValue> =
      c.wifi.psk === null
        ? { key_mgmt: 'none' }
        : { password: c.wifi.psk, password_encrypted: true, key_mgmt: 'wpa-psk' };
    parts.push(table('wlan', { ssid: c.wifi.ssid, ...security, hidden: c.wifi.hidden, country: c.wifi.country }));
  }
  const locale: Record<string, TomlValue> = {};
  if (c.keymap !== null) locale['keymap'] = c.keymap;
  if (c.timezone !== null) locale['timezone'] = c.timezone;
  if (Object.keys(locale).length > 0) parts.push(table('locale', locale));
  return parts.join('\n');
}
