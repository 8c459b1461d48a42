/**
 * The Customise dialog's form and the profile it describes. Pure, so the rules are
 * testable without a browser. The form holds a password or Wi-Fi passphrase only while it is
 * typed; the profile it turns into holds the hash or PSK the main process made of it.
 */
import type { CustomisationDraft } from '../../common/contracts/customise.js';
import { CARD_NUMBER, type CustomisationMethod, type Profile } from '../../common/domain/customisation.js';

export type SshMode = 'off' | 'keys' | 'password';

export interface CustomiseForm {
  name: string;
  hostname: string;
  userName: string;
  /** Typed now; '' keeps passwordHash. */
  password: string;
  passwordHash: string | null;
  ssh: SshMode;
  /** Authorized keys, one per line. */
  keys: string;
  ssid: string;
  /** Typed now; '' keeps psk, which is valid only for the network it was made with (pskSsid). */
  wifiPassword: string;
  psk: string | null;
  pskSsid: string | null;
  hidden: boolean;
  country: string;
  timezone: string;
  keymap: string;
  firstRunScript: string;
  userData: string;
  networkConfig: string;
  /** Grow the root filesystem to the card's end on the first boot. */
  growRoot: boolean;
  nextCard: number;
}

/** The form showing `profile` (or an empty one: every setting left as the image has it). */
export function formOf(profile: Profile | null): CustomiseForm {
  return {
    name: profile?.name ?? '',
    hostname: profile?.hostname ?? '',
    userName: profile?.user?.name ?? '',
    password: '',
    passwordHash: profile?.user?.passwordHash ?? null,
    ssh: profile === null || profile.ssh === null ? 'off' : profile.ssh.passwordAuth ? 'password' : 'keys',
    keys: profile?.ssh?.authorizedKeys.join('\n') ?? '',
    ssid: profile?.wifi?.ssid ?? '',
    wifiPassword: '',
    psk: profile?.wifi?.psk ?? null,
    pskSsid: profile === null || profile.wifi === null || profile.wifi.psk === null ? null : profile.wifi.ssid,
    hidden: profile?.wifi?.hidden ?? false,
    country: profile?.wifi?.country ?? '',
    timezone: profile?.timezone ?? '',
    keymap: profile?.keymap ?? '',
    firstRunScript: profile?.firstRunScript ?? '',
    userData: profile?.cloudInitUserData ?? '',
    networkConfig: profile?.cloudInitNetworkConfig ?? '',
    growRoot: profile?.growRoot === true,
    nextCard: profile?.nextCard ?? 1,
  };
}

const orNull = (text: string): string | null => (text.trim() === '' ? null : text.trim());
const fileOrNull = (text: string): string | null => (text.trim() === '' ? null : text);

/**
 * What the main process is asked to seal (sealCustomisation), or why the form is not complete yet.
 * Values are checked there against the profile schema; here only what needs the form itself.
 */
export function draftOf(form: CustomiseForm): { draft: CustomisationDraft } | { problem: string } {
  const userName = orNull(form.userName);
  if (userName === null && form.password !== '') return { problem: 'A password needs a user name.' };
  const keys = form.keys
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  if (form.ssh === 'keys' && keys.length === 0)
    return { problem: 'SSH with keys only needs at least one public key: add one, or allow password login.' };
  const ssid = form.ssid === '' ? null : form.ssid;
  if (ssid !== null && orNull(form.country) === null)
    return {
      problem:
        'Wi-Fi needs the country it is used in (such as GB, DE or US): it decides the channels the card may use.',
    };
  const keepPsk = form.wifiPassword === '' && form.psk !== null && form.pskSsid === ssid;
  if (ssid !== null && form.wifiPassword === '' && form.psk !== null && !keepPsk)
    return { problem: 'Type the Wi-Fi password again: its key is made from the network name, which changed.' };
  const profile: Profile = {
    name: orNull(form.name) ?? 'Customisation',
    hostname: orNull(form.hostname),
    user: userName === null ? null : { name: userName, passwordHash: form.password === '' ? form.passwordHash : null },
    ssh: form.ssh === 'off' ? null : { passwordAuth: form.ssh === 'password', authorizedKeys: keys },
    wifi:
      ssid === null
        ? null
        : {
            ssid,
            psk: keepPsk ? form.psk : null,
            hidden: form.hidden,
            country: (orNull(form.country) ?? '').toUpperCase(),
          },
    timezone: orNull(form.timezone),
    keymap: orNull(form.keymap),
    firstRunScript: fileOrNull(form.firstRunScript),
    cloudInitUserData: fileOrNull(form.userData),
    cloudInitNetworkConfig: fileOrNull(form.networkConfig),
    growRoot: form.growRoot ? true : null,
    nextCard: form.nextCard,
  };
  return {
    draft: {
      profile,
      password: form.password === '' ? null : form.password,
      wifiPassword: ssid === null || form.wifiPassword === '' ? null : form.wifiPassword,
    },
  };
}

/** `list` with `profile` in place of the one of its name, or added. */
export function withProfile(list: readonly Profile[], profile: Profile): Profile[] {
  return list.some((p) => p.name === profile.name)
    ? list.map((p) => (p.name === profile.name ? profile : p))
    : [...list, profile];
}

/** How each method is called on screen. */
export const METHOD_LABEL: Readonly<Record<CustomisationMethod, string>> = {
  'systemd-firstrun': 'Raspberry Pi OS first run (firstrun.sh)',
  'cloud-init': 'cloud-init (NoCloud seed on the boot partition)',
  'rpi-preseed': 'Raspberry Pi OS preseed (rpi-preseed.toml)',
};

/** A short line for the image step: what the customisation sets. */
export function customisationSummary(profile: Profile): string {
  const parts = [
    profile.hostname === null
      ? null
      : `host ${profile.hostname}${profile.hostname.includes(CARD_NUMBER) ? ` (next: ${profile.nextCard})` : ''}`,
    profile.user === null ? null : `user ${profile.user.name}`,
    profile.ssh === null
      ? null
      : profile.ssh.passwordAuth
        ? 'SSH with password'
        : `SSH with ${profile.ssh.authorizedKeys.length} key${profile.ssh.authorizedKeys.length === 1 ? '' : 's'}`,
    profile.wifi === null ? null : `Wi-Fi ${profile.wifi.ssid}`,
    profile.timezone,
    profile.keymap === null ? null : `keyboard ${profile.keymap}`,
    profile.firstRunScript === null && profile.cloudInitUserData === null && profile.cloudInitNetworkConfig === null
      ? null
      : 'own first-boot files',
  ];
  return parts.filter((p): p is string => p !== null).join(', ');
}
