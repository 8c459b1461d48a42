/**
 * The customisation flags of `sluice flash` and `sluice verify`: their names, fixed so
 * that scripts can rely on them (the last three are rpi-imager --cli's), and which go together.
 * Light on purpose: cli/main.ts loads it for every command; reading the files the flags name is
 * customise-options.ts's.
 */

/** parseArgs options for the customisation flags. */
export const CUSTOMISE_OPTIONS = {
  hostname: { type: 'string' },
  user: { type: 'string' },
  'password-file': { type: 'string' },
  'ssh-key': { type: 'string', multiple: true },
  'ssh-password': { type: 'boolean', default: false },
  'wifi-ssid': { type: 'string' },
  'wifi-password-file': { type: 'string' },
  'wifi-country': { type: 'string' },
  'wifi-hidden': { type: 'boolean', default: false },
  timezone: { type: 'string' },
  keymap: { type: 'string' },
  customise: { type: 'string' },
  'first-run-script': { type: 'string' },
  'cloudinit-userdata': { type: 'string' },
  'cloudinit-networkconfig': { type: 'string' },
  'grow-root': { type: 'boolean', default: false },
} as const;

/** The customisation flags as parseArgs returns them. */
export interface CustomiseFlags {
  hostname?: string | undefined;
  user?: string | undefined;
  'password-file'?: string | undefined;
  'ssh-key'?: string[] | undefined;
  'ssh-password'?: boolean | undefined;
  'wifi-ssid'?: string | undefined;
  'wifi-password-file'?: string | undefined;
  'wifi-country'?: string | undefined;
  'wifi-hidden'?: boolean | undefined;
  timezone?: string | undefined;
  keymap?: string | undefined;
  customise?: string | undefined;
  'first-run-script'?: string | undefined;
  'cloudinit-userdata'?: string | undefined;
  'cloudinit-networkconfig'?: string | undefined;
  'grow-root'?: boolean | undefined;
}

/** Whether any customisation flag was given. */
export function wantsCustomisation(flags: CustomiseFlags): boolean {
  return Object.entries(flags).some(
    ([key, value]) => key in CUSTOMISE_OPTIONS && value !== undefined && value !== false,
  );
}

/** The usage error for flags that do not go together, or null. */
export function customiseFlagsProblem(flags: CustomiseFlags): string | null {
  if (flags['password-file'] !== undefined && flags.user === undefined) return '--password-file needs --user NAME';
  if (
    (flags['wifi-password-file'] !== undefined ||
      flags['wifi-country'] !== undefined ||
      flags['wifi-hidden'] === true) &&
    flags['wifi-ssid'] === undefined
  )
    return '--wifi-password-file, --wifi-country and --wifi-hidden need --wifi-ssid SSID';
  if (flags['wifi-ssid'] !== undefined && flags['wifi-country'] === undefined)
    return '--wifi-ssid needs --wifi-country CC (the two-letter country the Wi-Fi is used in: it decides the channels the card may use)';
  return null;
}
