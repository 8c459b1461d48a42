import * as v from 'valibot';

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
  /** Capacity markers past the image, written before it and read back after it: a fake card fails the flash. */
  capacityCheck: v.boolean(),
});
export type Settings = v.InferOutput<typeof SettingsSchema>;

export const DEFAULT_SETTINGS: Readonly<Settings> = Object.freeze({ verify: true, eject: true, showVirtual: false, notifications: true, capacityCheck: true });

/** What the renderer may send to change settings: any subset of the fields, nothing else. */
export const SettingsPatchSchema = v.partial(SettingsSchema);
export type SettingsPatch = v.InferOutput<typeof SettingsPatchSchema>;
