/**
 * cloud-init NoCloud seed files (user-data, meta-data, network-config) for Ubuntu for Raspberry
 * Pi, Armbian and the other images that read their first-boot settings from the boot partition,
 * in the shape Raspberry Pi Imager writes them. The documents are built as data and printed by a
 * YAML library, so a network name or a key comment with quotes, colons or non-ASCII letters comes
 * back as it went in.
 */
import { createHash } from 'node:crypto';
import { stringify } from 'yaml';
import type { Customisation } from '../../common/domain/customisation.js';

/** Groups for the user, as Imager gives them; cloud-init skips those an image lacks. */
const USER_GROUPS = 'users,adm,dialout,audio,netdev,video,plugdev,cdrom,games,input,gpio,spi,i2c,render,sudo';

/** No folding: a key line or a hash stays on one line. */
function yaml(document: unknown): string {
  return stringify(document, { lineWidth: 0, minContentWidth: 0 });
}

/** The #cloud-config user-data for `c`: host name, user, SSH, time zone, keyboard, and growing the root. */
export function userData(c: Customisation): string {
  if (c.cloudInitUserData !== null) return c.cloudInitUserData;
  const config: Record<string, unknown> = {};
  if (c.hostname !== null) Object.assign(config, { hostname: c.hostname, manage_etc_hosts: true });
  if (c.timezone !== null) config['timezone'] = c.timezone;
  if (c.keymap !== null) config['keyboard'] = { model: 'pc105', layout: c.keymap };
  const keys = c.ssh?.authorizedKeys ?? [];
  if (c.user !== null) {
    const user: Record<string, unknown> = {
      name: c.user.name,
      groups: USER_GROUPS,
      shell: '/bin/bash',
      lock_passwd: c.user.passwordHash === null,
    };
    if (c.user.passwordHash !== null) user['passwd'] = c.user.passwordHash;
    if (keys.length > 0) user['ssh_authorized_keys'] = keys;
    user['sudo'] = 'ALL=(ALL) NOPASSWD:ALL';
    config['users'] = [user];
  } else if (keys.length > 0) {
    // No user named: the keys go to the image's default user.
    config['ssh_authorized_keys'] = keys;
  }
  if (c.growRoot === true) Object.assign(config, { growpart: { mode: 'auto', devices: ['/'] }, resize_rootfs: true });
  if (c.ssh !== null) {
    // Raspberry Pi OS's cloud-init module turns the SSH server on with this; other images run it already.
    config['enable_ssh'] = true;
    config['ssh_pwauth'] = c.ssh.passwordAuth || keys.length === 0;
  }
  return `#cloud-config\n${Object.keys(config).length === 0 ? '{}\n' : yaml(config)}`;
}

/**
 * meta-data: an instance id drawn from the settings, so that a card written again with other
 * settings is a new instance to cloud-init (which applies a seed once per instance), while the same
 * settings give the same bytes (sluice verify compares them).
 */
export function metaData(c: Customisation, userDataText: string, networkConfigText: string | null): string {
  const digest = createHash('sha256')
    .update(userDataText)
    .update('\0')
    .update(networkConfigText ?? '')
    .digest('hex')
    .slice(0, 16);
  const meta: Record<string, string> = { 'instance-id': `sluice-${digest}` };
  if (c.hostname !== null) meta['local-hostname'] = c.hostname;
  return yaml(meta);
}

/**
 * network-config (netplan version 2) for the Wi-Fi: the PSK rather than the passphrase, the
 * regulatory domain, and Ethernet by DHCP as the images' own network-config has it. Null without
 * Wi-Fi settings: the image's own file stays.
 */
export function networkConfig(c: Customisation): string | null {
  if (c.cloudInitNetworkConfig !== null) return c.cloudInitNetworkConfig;
  if (c.wifi === null) return null;
  const point: Record<string, unknown> = {};
  if (c.wifi.psk !== null) point['password'] = c.wifi.psk;
  if (c.wifi.hidden) point['hidden'] = true;
  return yaml({
    network: {
      version: 2,
      ethernets: { eth0: { dhcp4: true, optional: true } },
      wifis: {
        wlan0: {
          dhcp4: true,
          optional: true,
          'regulatory-domain': c.wifi.country,
          'access-points': { [c.wifi.ssid]: point },
        },
      },
    },
  });
}
