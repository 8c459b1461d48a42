/**
 * firstrun.sh for Raspberry Pi OS and its derivatives, in the format Raspberry Pi Imager writes:
 * systemd runs it once from the kernel command line (see cmdline.ts), it applies the settings
 * through the image's own /usr/lib/raspberrypi-sys-mods/imager_custom and userconf-pi where they
 * exist (falling back to the plain commands on older images), then removes itself and its
 * command-line arguments. Every value is single-quoted for the shell; the values that also land
 * in other files (host name, key lines) were checked against their schemas first.
 */
import type { Customisation } from '../../common/domain/customisation.js';

const IMAGER_CUSTOM = '/usr/lib/raspberrypi-sys-mods/imager_custom';
const USERCONF = '/usr/lib/userconf-pi/userconf';

/** The groups Raspberry Pi OS gives its first user, for the fallback that makes one. */
const PI_GROUPS = 'users,adm,dialout,audio,netdev,video,plugdev,cdrom,games,input,gpio,spi,i2c,render,sudo';

/** `value` as one shell word: single quotes, each ' written as '\''. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

/** The kernel command-line arguments that make systemd run the script once and reboot. */
export function firstRunArguments(bootDir: string): string[] {
  return [`systemd.run=${bootDir}/firstrun.sh`, 'systemd.run_success_action=reboot', 'systemd.unit=kernel-command-line.target'];
}

/** The hex form of a network name, which wpa_supplicant.conf takes unquoted for any bytes. */
function hexSsid(ssid: string): string {
  return Buffer.from(ssid, 'utf8').toString('hex');
}

function hostnameLines(hostname: string): string[] {
  const name = shellQuote(hostname);
  return [
    `if [ -f ${IMAGER_CUSTOM} ]; then`,
    `   ${IMAGER_CUSTOM} set_hostname ${name}`,
    'else',
    `   CURRENT_HOSTNAME=$(tr -d ' \\t\\n\\r' </etc/hostname)`,
    `   echo ${name} >/etc/hostname`,
    // A host name holds only letters, digits, hyphens and dots: nothing sed would read as syntax.
    `   sed -i "s/127.0.1.1.*$CURRENT_HOSTNAME/127.0.1.1\\t${hostname}/g" /etc/hosts`,
    'fi',
  ];
}

function sshLines(ssh: NonNullable<Customisation['ssh']>): string[] {
  const keys = ssh.authorizedKeys;
  const mode = ssh.passwordAuth ? '-p' : keys.length > 0 ? '-k' : '-p';
  const lines = [`if [ -f ${IMAGER_CUSTOM} ]; then`, `   ${IMAGER_CUSTOM} enable_ssh ${[mode, ...keys.map(shellQuote)].join(' ')}`, 'else'];
  if (keys.length > 0) {
    lines.push(
      '   install -o "$FIRSTUSER" -m 700 -d "$FIRSTUSERHOME/.ssh"',
      // A quoted delimiter: the key lines (checked to be single lines) are taken as they are.
      `   cat >>"$FIRSTUSERHOME/.ssh/authorized_keys" <<'SLUICE_KEYS'`,
      ...keys,
      'SLUICE_KEYS',
      '   chown "$FIRSTUSER:$FIRSTUSER" "$FIRSTUSERHOME/.ssh/authorized_keys"',
      '   chmod 600 "$FIRSTUSERHOME/.ssh/authorized_keys"',
    );
  }
  lines.push(`   echo 'PasswordAuthentication ${ssh.passwordAuth || keys.length === 0 ? 'yes' : 'no'}' >>/etc/ssh/sshd_config`, '   systemctl enable ssh', 'fi');
  return lines;
}

function userLines(user: NonNullable<Customisation['user']>): string[] {
  const name = shellQuote(user.name);
  const hash = user.passwordHash === null ? null : shellQuote(user.passwordHash);
  const lines = [`if [ -f ${USERCONF} ]; then`, `   ${USERCONF} ${name}${hash === null ? '' : ` ${hash}`}`, 'else'];
  lines.push(
    '   if [ -z "$FIRSTUSER" ]; then',
    `      useradd -m -s /bin/bash -G ${PI_GROUPS} ${name}`,
    `   elif [ "$FIRSTUSER" != ${name} ]; then`,
    `      usermod -l ${name} "$FIRSTUSER"`,
    `      usermod -m -d /home/${user.name} ${name}`,
    `      groupmod -n ${name} "$FIRSTUSER"`,
    `      if [ -f /etc/sudoers.d/010_pi-nopasswd ]; then sed -i "s/^$FIRSTUSER /${user.name} /" /etc/sudoers.d/010_pi-nopasswd; fi`,
    '   fi',
  );
  if (hash !== null) lines.push(`   echo ${name}:${hash} | chpasswd -e`);
  lines.push('fi');
  return lines;
}

function wifiLines(wifi: NonNullable<Customisation['wifi']>): string[] {
  const psk = wifi.psk ?? '';
  const args = [...(wifi.hidden ? ['-h'] : []), shellQuote(wifi.ssid), shellQuote(psk), shellQuote(wifi.country)];
  return [
    `if [ -f ${IMAGER_CUSTOM} ]; then`,
    `   ${IMAGER_CUSTOM} set_wlan ${args.join(' ')}`,
    'else',
    "cat >/etc/wpa_supplicant/wpa_supplicant.conf <<'SLUICE_WPA'",
    `country=${wifi.country}`,
    'ctrl_interface=DIR=/var/run/wpa_supplicant GROUP=netdev',
    'ap_scan=1',
    'update_config=1',
    'network={',
    ...(wifi.hidden ? ['\tscan_ssid=1'] : []),
    `\tssid=${hexSsid(wifi.ssid)}`,
    ...(wifi.psk === null ? ['\tkey_mgmt=NONE'] : ['\tkey_mgmt=WPA-PSK SAE', `\tpsk=${wifi.psk}`, '\tieee80211w=1']),
    '}',
    'SLUICE_WPA',
    '   chmod 600 /etc/wpa_supplicant/wpa_supplicant.conf',
    '   rfkill unblock wifi',
    '   for filename in /var/lib/systemd/rfkill/*:wlan; do',
    '      echo 0 >"$filename"',
    '   done',
    'fi',
  ];
}

function localeLines(keymap: string | null, timezone: string | null): string[] {
  const lines = [`if [ -f ${IMAGER_CUSTOM} ]; then`];
  if (keymap !== null) lines.push(`   ${IMAGER_CUSTOM} set_keymap ${shellQuote(keymap)}`);
  if (timezone !== null) lines.push(`   ${IMAGER_CUSTOM} set_timezone ${shellQuote(timezone)}`);
  lines.push('else');
  if (timezone !== null) lines.push('   rm -f /etc/localtime', `   echo ${shellQuote(timezone)} >/etc/timezone`, '   dpkg-reconfigure -f noninteractive tzdata');
  if (keymap !== null) {
    lines.push(
      "cat >/etc/default/keyboard <<'SLUICE_KEYBOARD'",
      'XKBMODEL="pc105"',
      `XKBLAYOUT="${keymap}"`,
      'XKBVARIANT=""',
      'XKBOPTIONS=""',
      'SLUICE_KEYBOARD',
      '   dpkg-reconfigure -f noninteractive keyboard-configuration',
    );
  }
  lines.push('fi');
  return lines;
}

/** The firstrun.sh Sluice writes for `c`, which lives at `bootDir` on the running system (/boot or /boot/firmware). */
export function firstRunScript(c: Customisation, bootDir: string): string {
  const lines = [
    '#!/bin/bash',
    '# Written by Sluice. Runs once on the first boot (systemd.run= in cmdline.txt), applies the',
    '# settings chosen when the card was written, then removes itself and its cmdline.txt arguments.',
    "# shellcheck disable=SC2016 # a password hash's $6$ is meant literally, inside single quotes",
    '',
    'set +e',
    '',
  ];
  if (c.hostname !== null) lines.push(...hostnameLines(c.hostname), '');
  if (c.ssh !== null || c.user !== null) lines.push('FIRSTUSER=$(getent passwd 1000 | cut -d: -f1)', ...(c.ssh !== null && c.ssh.authorizedKeys.length > 0 ? ['FIRSTUSERHOME=$(getent passwd 1000 | cut -d: -f6)'] : []), '');
  if (c.ssh !== null) lines.push(...sshLines(c.ssh), '');
  if (c.user !== null) lines.push(...userLines(c.user), '');
  if (c.wifi !== null) lines.push(...wifiLines(c.wifi), '');
  if (c.keymap !== null || c.timezone !== null) lines.push(...localeLines(c.keymap, c.timezone), '');
  lines.push(`rm -f ${bootDir}/firstrun.sh`, `sed -i 's| systemd.run.*||g' ${bootDir}/cmdline.txt`, 'exit 0', '');
  return lines.join('\n');
}
