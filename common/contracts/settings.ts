import * as v from 'valibot';
import { ProfileSchema } from '../domain/customisation.js';
import { DEFAULT_REPOSITORY } from '../domain/catalogue.js';

/** Saved customisation profiles: more is a list nobody can pick from. */
export const MAX_PROFILES = 32;

/** Catalogues a person keeps at most: a few vendors' lists and a local manifest or two. */
const MAX_REPOSITORIES = 16;

/** A catalogue's address (http or https) or a local file's absolute path. */
export const RepositorySchema = v.pipe(
  v.string(),
  v.minLength(1),
  v.maxLength(2048),
  v.check(
    (value) => /^https?:\/\/\S+$/i.test(value) || /^(\/|[A-Za-z]:\\)/.test(value),
    "A catalogue is an http(s) address or a file's full path.",
  ),
);

/** The user's preferences, persisted as JSON in the app's userData folder. */
export const SettingsSchema = v.strictObject({
  /** Read every drive back after writing and compare it with the image. */
  verify: v.boolean(),
  /** Eject the drives after a successful flash, so they can be pulled out at once. */
  eject: v.boolean(),
  /** List virtual drives too (loop devices, disk images attached as drives). */
  showVirtual: v.boolean(),
  /** A desktop notification when a flash ends. */
  notifications: v.boolean(),
  /**
   * Saved customisation profiles, each name once. A profile holds a password only as its
   * sha512-crypt hash and a Wi-Fi passphrase only as its PSK (ProfileSchema has no field for either
   * in clear), so this file never holds one.
   */
  profiles: v.pipe(
    v.array(ProfileSchema),
    v.maxLength(MAX_PROFILES),
    v.check(
      (profiles) => new Set(profiles.map((p) => p.name)).size === profiles.length,
      'each profile has its own name',
    ),
  ),
  /** Write every byte of the image (flash --exact): no free space and no block map left out. */
  exact: v.boolean(),
  /** The OS catalogues "Choose OS" lists (os_list v4 addresses or local files), in order. */
  repositories: v.pipe(v.array(RepositorySchema), v.maxLength(MAX_REPOSITORIES)),
  /** The image cache's size limit, in bytes (least recently used images go first). */
  cacheLimitBytes: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(Number.MAX_SAFE_INTEGER)),
  /** Capacity markers past the image, written before it and read back after it: a fake card fails the flash. */
  capacityCheck: v.boolean(),
});
export type Settings = v.InferOutput<typeof SettingsSchema>;

/** The settings that are switches (the settings dialog's checkboxes). */
export type SwitchSetting = { [K in keyof Settings]: Settings[K] extends boolean ? K : never }[keyof Settings];

export const DEFAULT_SETTINGS: Readonly<Settings> = Object.freeze({
  verify: true,
  eject: true,
  showVirtual: false,
  notifications: true,
  exact: false,
  profiles: [],
  repositories: [DEFAULT_REPOSITORY],
  cacheLimitBytes: 20_000_000_000,
  capacityCheck: true,
});

/** What the renderer may send to change settings: any subset of the fields, nothing else. */
export const SettingsPatchSchema = v.partial(SettingsSchema);
export type SettingsPatch = v.InferOutput<typeof SettingsPatchSchema>;
