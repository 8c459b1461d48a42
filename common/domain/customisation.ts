/**
 * A card's first-boot settings: what `sluice flash --hostname ...`, `--customise
 * PROFILE.json` and the app's Customise step ask for, in the one shape every part checks. Only
 * hashes and PSKs are in it: a password is hashed (sha512-crypt) and a Wi-Fi passphrase turned into
 * its WPA PSK where it is read (user/customise/secrets.ts), so neither is ever in clear here, in a
 * saved profile, on the card or in a log.
 */
import * as v from 'valibot';

/** How an image takes its first-boot settings, in the formats Raspberry Pi Imager writes. */
export const CUSTOMISATION_METHODS = ['systemd-firstrun', 'cloud-init', 'rpi-preseed'] as const;
export type CustomisationMethod = (typeof CUSTOMISATION_METHODS)[number];

/** What the image offers: the method found and why, or what was looked for when none was. */
export interface CustomisationSupport {
  method: CustomisationMethod | null;
  /** The evidence ("cmdline.txt and config.txt on the FAT boot partition, ...") or what is missing. */
  why: string;
}

/** UTF-8 length of `text`, without TextEncoder (common/ has no DOM or Node types). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return bytes;
}

/** C0 and C1 control characters and DEL: none belongs in a name, and a newline would end a line of a config file early. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** RFC 1123 host name: labels of letters, digits and inner hyphens, up to 63 each, 253 in all. */
const HOSTNAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
export const Hostname = v.pipe(
  v.string(),
  v.regex(
    HOSTNAME,
    'a host name has letters, digits and hyphens (not first or last), at most 63 in each dot-separated part',
  ),
);

/** The per-card counter a hostname template may hold: pi-{n} gives pi-1, pi-2, ... */
export const CARD_NUMBER = '{n}';

/** The host name a template gives card number `n`. */
export function hostnameFor(template: string, n: number): string {
  return template.split(CARD_NUMBER).join(String(n));
}

/** A host name, or a template whose every card's name is one (checked with a 6-digit number, the longest a counter reaches in practice). */
export const HostnameTemplate = v.pipe(
  v.string(),
  v.check(
    (template) => HOSTNAME.test(hostnameFor(template, 999999)),
    'a host name has letters, digits and hyphens (not first or last), at most 63 in each dot-separated part; {n} stands for the card number',
  ),
);

/** Debian's NAME_REGEX (adduser.conf), and useradd's 32-character limit. */
export const UserName = v.pipe(
  v.string(),
  v.regex(
    /^[a-z_][a-z0-9_-]{0,31}$/,
    'a user name has lower-case letters, digits, "_" and "-", starts with a letter or "_", and has at most 32 characters',
  ),
);

/** sha512-crypt, as crypt(3) and chpasswd -e take it: $6$[rounds=N$]salt$hash. Never a password in clear. */
export const PasswordHash = v.pipe(
  v.string(),
  v.regex(
    /^\$6\$(?:rounds=\d{4,9}\$)?[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{86}$/,
    'a password is kept only as its sha512-crypt hash ($6$...)',
  ),
);

/**
 * One line of an OpenSSH public key: type, base64 blob, optional comment. Checked here by its shape;
 * user/customise/ssh-keys.ts also checks that the blob names the same type, when a key is read.
 */
export const PUBLIC_KEY_LINE =
  /^(ssh-ed25519|ssh-rsa|ssh-dss|ecdsa-sha2-nistp(?:256|384|521)|sk-ssh-ed25519@openssh\.com|sk-ecdsa-sha2-nistp256@openssh\.com) ([A-Za-z0-9+/]+={0,2})(?: ([^\r\n]*))?$/;
export const PublicKeyLine = v.pipe(
  v.string(),
  v.maxLength(16 * 1024),
  v.regex(
    PUBLIC_KEY_LINE,
    'an SSH public key is one line: its type (ssh-ed25519, ssh-rsa, ecdsa-sha2-...), the key in base64, and a comment',
  ),
);

/** An SSID is 1 to 32 bytes; Sluice takes UTF-8 text without control characters (it goes into config files line by line). */
export const Ssid = v.pipe(
  v.string(),
  v.check((ssid) => utf8Length(ssid) >= 1 && utf8Length(ssid) <= 32, 'a Wi-Fi network name (SSID) has 1 to 32 bytes'),
  v.check(
    (ssid) => !CONTROL.test(ssid),
    'a Wi-Fi network name (SSID) may not hold control characters such as a line break',
  ),
);

/** The WPA pre-shared key: PBKDF2-SHA1(passphrase, SSID, 4096 rounds, 32 bytes), in hex. Never the passphrase. */
export const WifiPsk = v.pipe(
  v.string(),
  v.regex(/^[0-9a-f]{64}$/, 'a Wi-Fi password is kept only as its 64-digit WPA key'),
);

/** ISO 3166-1 alpha-2, as the kernel's regulatory database takes it. */
export const Country = v.pipe(
  v.string(),
  v.regex(/^[A-Z]{2}$/, 'a Wi-Fi country is a two-letter code such as GB, DE or US'),
);

/** A tz database name: Europe/London, America/Argentina/Buenos_Aires, UTC. */
export const Timezone = v.pipe(
  v.string(),
  v.maxLength(64),
  v.regex(/^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+){0,2}$/, 'a time zone is a name such as Europe/London or UTC'),
);

/** An XKB keyboard layout: gb, us, de, fr, ... */
export const Keymap = v.pipe(
  v.string(),
  v.regex(/^[a-z][a-z0-9_-]{0,31}$/, 'a keyboard layout is a name such as gb, us or de'),
);

/** A user's own first-boot script or cloud-init file, as text. */
export const MAX_OWN_FILE_BYTES = 256 * 1024;
const OwnFile = v.pipe(
  v.string(),
  v.check(
    (text) => utf8Length(text) <= MAX_OWN_FILE_BYTES,
    `a first-boot file may have at most ${MAX_OWN_FILE_BYTES / 1024} KiB`,
  ),
);

/** At most this many authorized keys; more is a mistake, not a card. */
export const MAX_AUTHORIZED_KEYS = 64;

const entries = {
  user: v.optional(
    v.nullable(v.strictObject({ name: UserName, passwordHash: v.optional(v.nullable(PasswordHash), null) })),
    null,
  ),
  /** SSH turned on: with keys only, or also with the password (passwordAuth). Null leaves the image's own setting. */
  ssh: v.optional(
    v.nullable(
      v.strictObject({
        passwordAuth: v.optional(v.boolean(), false),
        authorizedKeys: v.optional(v.pipe(v.array(PublicKeyLine), v.maxLength(MAX_AUTHORIZED_KEYS)), []),
      }),
    ),
    null,
  ),
  /** psk null is an open network. */
  wifi: v.optional(
    v.nullable(
      v.strictObject({
        ssid: Ssid,
        psk: v.optional(v.nullable(WifiPsk), null),
        hidden: v.optional(v.boolean(), false),
        country: Country,
      }),
    ),
    null,
  ),
  timezone: v.optional(v.nullable(Timezone), null),
  keymap: v.optional(v.nullable(Keymap), null),
  /**
   * Grow the last partition and its ext4 filesystem to the card's end on the first boot (a shrunk
   * backup restored onto a larger card): cloud-init's growpart and resize_rootfs, or a step of
   * firstrun.sh. Null leaves the image's size as it is.
   */
  growRoot: v.optional(v.nullable(v.literal(true)), null),
  /** The whole firstrun.sh, in place of the one Sluice writes (rpi-imager --first-run-script). */
  firstRunScript: v.optional(v.nullable(OwnFile), null),
  /** The whole user-data, in place of Sluice's (rpi-imager --cloudinit-userdata). */
  cloudInitUserData: v.optional(v.nullable(OwnFile), null),
  /** The whole network-config, in place of Sluice's (rpi-imager --cloudinit-networkconfig). */
  cloudInitNetworkConfig: v.optional(v.nullable(OwnFile), null),
};

/** The settings for one card, every template filled in. */
export const CustomisationSchema = v.strictObject({ hostname: v.optional(v.nullable(Hostname), null), ...entries });
export type Customisation = v.InferOutput<typeof CustomisationSchema>;

/**
 * A saved profile, and the file `--customise PROFILE.json` reads: the settings with a hostname
 * template, a name to pick it by, and the number the next card gets.
 */
export const ProfileSchema = v.strictObject({
  name: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(64)), 'Customisation'),
  hostname: v.optional(v.nullable(HostnameTemplate), null),
  ...entries,
  nextCard: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(999999)), 1),
});
export type Profile = v.InferOutput<typeof ProfileSchema>;

/** Nothing to write: every setting left as the image has it. */
export function isEmptyCustomisation(c: Customisation): boolean {
  return Object.values(c).every((value) => value === null);
}

/** The settings for card number `n` of a profile. */
export function customisationFor(profile: Profile, n: number): Customisation {
  const { name: _name, nextCard: _next, hostname, ...rest } = profile;
  return { ...rest, hostname: hostname === null ? null : hostnameFor(hostname, n) };
}

/** Each card's settings, `count` cards numbered from the profile's next card; null when nothing is set. */
export function cardsOf(profile: Profile, count: number): Customisation[] | null {
  const cards = Array.from({ length: count }, (_, i) => customisationFor(profile, profile.nextCard + i));
  return cards.every(isEmptyCustomisation) ? null : cards;
}

/**
 * The number the next card gets after a flash that customised cards from `nextCard` on: past the
 * last card customised (results come in target order, and target i got nextCard + i), so a
 * classroom set flashed a few at a time gets each name once.
 */
export function nextCardAfter(
  nextCard: number,
  results: readonly { status: string; customised?: boolean | undefined }[],
): number {
  const last = results.findLastIndex((r) => r.status === 'ok' && r.customised === true);
  return Math.min(nextCard + last + 1, 999999);
}

/**
 * The most bytes customisation writes onto one card after the image: three own files at their
 * limit, the generated files and the FAT and directory changes fit with room to spare.
 */
export const MAX_OVERLAY_BYTES = 2 * 1024 * 1024;

/**
 * What customising writes onto each card, as the probe process plans it (user/customise/plan.ts)
 * and as it travels to the helper: per card, the image byte ranges to write after the image, as
 * [offset, base64 bytes], in the order they are written.
 */
export interface PreparedCustomisation {
  method: CustomisationMethod;
  why: string;
  /** Per card: the boot partition's files written, with their sizes. */
  files: { name: string; size: number }[][];
  overlays: [number, string][][];
}
