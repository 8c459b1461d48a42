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

/** The groups Raspberry Pi OS gives its first user; the fallback that makes one adds those the system has. */
const PI_GROUPS = [
  'users',
  'adm',
  'dialout',
  'audio',
  'netdev',
  'video',
  'plugdev',
  'cdrom',
  'games',
  'input',
  'gpio',
  'spi',
  'i2c',
  'render',
  'sudo',
];

/** The report firstrun.sh leaves on the boot partition: one line per step, no values. */
export const FIRSTRUN_REPORT = 'sluice-firstrun.txt';

/** `value` as one shell word: single quotes, each ' written as '\''. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

/**
 * The kernel command-line arguments that make systemd run the script once and reboot. The boot
 * partition is mounted at /boot/firmware (Raspberry Pi OS from Bookworm) or /boot (older ones and
 * derivatives), and a compressed image's root filesystem, which says which, is not read before
 * writing; so the command looks in both, rather than guess and have systemd power the card off
 * on every boot for a script it cannot find. Should neither hold it (the boot partition not
 * mounted at all), the failure leaves the card on (run_failure_action=none) instead of the
 * default, which powers it off. The command holds no "$" and no ";" word: systemd would expand
 * or split them in the ExecStart= it becomes.
 */
export function firstRunArguments(): string[] {
  const run = (dir: string) => `/bin/bash ${dir}/firstrun.sh`;
  const command = `/bin/sh -c 'test -f /boot/firmware/firstrun.sh && exec ${run('/boot/firmware')} || exec ${run('/boot')}'`;
  return [
    `systemd.run="${command}"`,
    'systemd.run_success_action=reboot',
    'systemd.run_failure_action=none',
    'systemd.unit=kernel-command-line.target',
  ];
}

/** The hex form of a network name, which wpa_supplicant.conf takes unquoted for any bytes. */
function hexSsid(ssid: string): string {
  return Buffer.from(ssid, 'utf8').toString('hex');
}

/** A step of the script: what it is called in the report, and its commands. */
interface Step {
  name: string;
  body: string[];
}

/**
 * A step that runs the image's own imager_custom `command` (Raspberry Pi OS from Bookworm), or
 * `fallback`, the plain commands, on images without it.
 */
function imagerStep(name: string, command: string, fallback: readonly string[]): Step {
  return {
    name,
    body: [`if [ -f ${IMAGER_CUSTOM} ]; then`, `   ${IMAGER_CUSTOM} ${command}`, 'else', ...fallback, 'fi'],
  };
}

function hostnameStep(hostname: string): Step {
  const name = shellQuote(hostname);
  return imagerStep('hostname', `set_hostname ${name}`, [
    `   CURRENT_HOSTNAME=$(tr -d ' \\t\\n\\r' </etc/hostname)`,
    `   echo ${name} >/etc/hostname`,
    // A host name holds only letters, digits, hyphens and dots: nothing sed would read as syntax.
    `   sed -i "s/127.0.1.1.*$CURRENT_HOSTNAME/127.0.1.1\\t${hostname}/g" /etc/hosts`,
  ]);
}

/**
 * The user: the image's first user (uid 1000) renamed, or a new one where there is none, in the
 * groups of Raspberry Pi OS's first user that the system has.
 */
function userStep(user: NonNullable<Customisation['user']>): Step {
  const name = shellQuote(user.name);
  const hash = user.passwordHash === null ? null : shellQuote(user.passwordHash);
  const body = [`if [ -f ${USERCONF} ]; then`, `   ${USERCONF} ${name}${hash === null ? '' : ` ${hash}`}`, 'else'];
  body.push(
    '   if [ -z "$FIRSTUSER" ]; then',
    '      SLUICE_GROUPS=',
    `      for group in ${PI_GROUPS.join(' ')}; do`,
    '         if getent group "$group" >/dev/null; then SLUICE_GROUPS="${SLUICE_GROUPS:+$SLUICE_GROUPS,}$group"; fi',
    '      done',
    `      useradd -m -s /bin/bash \${SLUICE_GROUPS:+-G "$SLUICE_GROUPS"} ${name}`,
    `   elif [ "$FIRSTUSER" != ${name} ]; then`,
    `      usermod -l ${name} "$FIRSTUSER"`,
    `      usermod -m -d /home/${user.name} ${name}`,
    `      groupmod -n ${name} "$FIRSTUSER"`,
    `      if [ -f /etc/sudoers.d/010_pi-nopasswd ]; then sed -i "s/^$FIRSTUSER /${user.name} /" /etc/sudoers.d/010_pi-nopasswd; fi`,
    '   fi',
  );
  if (hash !== null) body.push(`   echo ${name}:${hash} | chpasswd -e`);
  body.push('fi');
  return { name: 'user', body };
}

/** SSH, after the user step: keys go into the home of the user it made or renamed (else uid 1000's), as the passwd database gives it. */
function sshStep(ssh: NonNullable<Customisation['ssh']>, userName: string | null): Step {
  const keys = ssh.authorizedKeys;
  const mode = ssh.passwordAuth ? '-p' : keys.length > 0 ? '-k' : '-p';
  const fallback: string[] = [];
  if (keys.length > 0) {
    fallback.push(
      `   KEYUSER=${userName === null ? '$(getent passwd 1000 | cut -d: -f1)' : shellQuote(userName)}`,
      '   KEYHOME=$(getent passwd "$KEYUSER" | cut -d: -f6)',
      '   if [ -z "$KEYUSER" ] || [ -z "$KEYHOME" ]; then echo "no user to install the SSH keys for" >&2; exit 1; fi',
      '   install -o "$KEYUSER" -g "$(id -g "$KEYUSER")" -m 700 -d "$KEYHOME/.ssh"',
      // A quoted delimiter: the key lines (checked to be single lines) are taken as they are.
      `   cat >>"$KEYHOME/.ssh/authorized_keys" <<'SLUICE_KEYS'`,
      ...keys,
      'SLUICE_KEYS',
      '   chown "$KEYUSER:$(id -g "$KEYUSER")" "$KEYHOME/.ssh/authorized_keys"',
      '   chmod 600 "$KEYHOME/.ssh/authorized_keys"',
    );
  }
  fallback.push(
    `   echo 'PasswordAuthentication ${ssh.passwordAuth || keys.length === 0 ? 'yes' : 'no'}' >>/etc/ssh/sshd_config`,
    '   systemctl enable ssh',
  );
  return imagerStep('ssh', `enable_ssh ${[mode, ...keys.map(shellQuote)].join(' ')}`, fallback);
}

function wifiStep(wifi: NonNullable<Customisation['wifi']>): Step {
  const psk = wifi.psk ?? '';
  const args = [...(wifi.hidden ? ['-h'] : []), shellQuote(wifi.ssid), shellQuote(psk), shellQuote(wifi.country)];
  return imagerStep('wifi', `set_wlan ${args.join(' ')}`, [
    '   mkdir -p /etc/wpa_supplicant',
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
    // A system without a radio (or without rfkill) has nothing to unblock.
    '   if command -v rfkill >/dev/null; then rfkill unblock wifi || true; fi',
    '   for filename in /var/lib/systemd/rfkill/*:wlan; do',
    '      if [ -e "$filename" ]; then echo 0 >"$filename"; fi',
    '   done',
  ]);
}

function timezoneStep(timezone: string): Step {
  const zone = shellQuote(timezone);
  return imagerStep('timezone', `set_timezone ${zone}`, [
    // An unknown zone would leave a dangling link: refused, and the old zone kept.
    `   test -f /usr/share/zoneinfo/${zone}`,
    `   ln -sf /usr/share/zoneinfo/${zone} /etc/localtime`,
    `   echo ${zone} >/etc/timezone`,
  ]);
}

function keymapStep(keymap: string): Step {
  return imagerStep('keymap', `set_keymap ${shellQuote(keymap)}`, [
    // An unknown layout would leave a console without a keymap: refused, and the old one kept (a layout is [a-z0-9_-]: no pattern syntax).
    `   grep -q "^  ${keymap} " /usr/share/X11/xkb/rules/base.lst`,
    "cat >/etc/default/keyboard <<'SLUICE_KEYBOARD'",
    'XKBMODEL="pc105"',
    `XKBLAYOUT="${keymap}"`,
    'XKBVARIANT=""',
    'XKBOPTIONS=""',
    'SLUICE_KEYBOARD',
    '   if command -v setupcon >/dev/null; then setupcon --save-only -k || true; fi',
  ]);
}

/**
 * The root partition grown to the card's end and its filesystem after it, online: growpart where
 * the image has it (cloud-guest-utils), else sfdisk (a GPT's backup header first moved to the
 * card's end, where a shrunk image left it short) and partx to tell the kernel. resize2fs grows a
 * mounted ext4.
 */
function growRootStep(): Step {
  return {
    name: 'grow-root',
    body: [
      '   ROOT_PART=$(findmnt -n -o SOURCE /)',
      '   ROOT_DISK=/dev/$(lsblk -n -o PKNAME "$ROOT_PART")',
      '   PART_NUM=$(cat "/sys/class/block/${ROOT_PART##*/}/partition")',
      '   if command -v growpart >/dev/null; then',
      // growpart exits 1 when there is nothing to grow: a card the size of the image.
      '      growpart "$ROOT_DISK" "$PART_NUM" || [ "$?" -eq 1 ]',
      '   else',
      '      if sfdisk --dump "$ROOT_DISK" | grep -q "^label: gpt"; then sfdisk --no-reread --no-tell-kernel --relocate gpt-bak-std "$ROOT_DISK"; fi',
      '      echo ", +" | sfdisk --no-reread --no-tell-kernel -N "$PART_NUM" "$ROOT_DISK"',
      '      partx --update --nr "$PART_NUM" "$ROOT_DISK"',
      '   fi',
      '   resize2fs "$ROOT_PART"',
    ],
  };
}

/** The steps for `c`, in the order they run: the user before the keys that go into its home. */
function stepsFor(c: Customisation): Step[] {
  const steps: Step[] = [];
  if (c.hostname !== null) steps.push(hostnameStep(c.hostname));
  if (c.user !== null) steps.push(userStep(c.user));
  if (c.ssh !== null) steps.push(sshStep(c.ssh, c.user?.name ?? null));
  if (c.wifi !== null) steps.push(wifiStep(c.wifi));
  if (c.timezone !== null) steps.push(timezoneStep(c.timezone));
  if (c.keymap !== null) steps.push(keymapStep(c.keymap));
  if (c.growRoot === true) steps.push(growRootStep());
  return steps;
}

/**
 * The firstrun.sh Sluice writes for `c`. Each step runs on its own under `set -e`, so one that
 * fails stops there and the others still run; the report on the boot partition (FIRSTRUN_REPORT)
 * names each step and whether it applied, and no value, so it holds no secret. The script finds
 * the boot partition where it lives itself: /boot/firmware or /boot.
 */
export function firstRunScript(c: Customisation): string {
  const steps = stepsFor(c);
  const lines = [
    '#!/bin/bash',
    '# Written by Sluice. Runs once on the first boot (systemd.run= in cmdline.txt), applies the',
    '# settings chosen when the card was written, leaves a report of each step in',
    `# ${FIRSTRUN_REPORT}, then removes itself and its cmdline.txt arguments.`,
    "# shellcheck disable=SC2016 # a password hash's $6$ is meant literally, inside single quotes",
    '',
    'set +e',
    'BOOT=$(dirname "$(readlink -f "$0")")',
    `REPORT="$BOOT/${FIRSTRUN_REPORT}"`,
    ...(c.user === null ? [] : ['FIRSTUSER=$(getent passwd 1000 | cut -d: -f1)']),
    'echo "Sluice first boot: $(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$REPORT"',
    '',
    '# Reports step $1, whose subshell ended with status $2.',
    'report_step() {',
    '   if [ "$2" -eq 0 ]; then echo "applied $1" >>"$REPORT"; else echo "FAILED $1 (exit status $2; the journal of this boot has its output)" >>"$REPORT"; fi',
    '}',
    '',
  ];
  // Each step in a subshell that stops at its first failing command, and only it.
  for (const step of steps)
    lines.push(`# ${step.name}`, '(', 'set -e', ...step.body, ')', `report_step ${step.name} "$?"`, '');
  lines.push('', 'rm -f "$BOOT/firstrun.sh"', `sed -i 's| systemd.run.*||g' "$BOOT/cmdline.txt"`, 'sync', 'exit 0', '');
  return lines.join('\n');
}
