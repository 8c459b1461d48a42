/**
 * What the app's Customise step sends and gets back. The page holds a password or a
 * Wi-Fi passphrase only while it is typed: sealCustomisation takes it across once, and the main
 * process answers with the profile holding its hash or PSK (electron/core/customise.ts). Saved
 * profiles, flash requests and the settings file only ever hold a Profile, which cannot hold either.
 */
import * as v from 'valibot';
import { ProfileSchema, type CustomisationMethod } from '../domain/customisation.js';

/** What the form gives: the profile, and the secrets typed in it this time (null: keep what the profile holds). */
export const CustomisationDraftSchema = v.strictObject({
  profile: ProfileSchema,
  /** The user's password in clear: hashed (sha512-crypt) in the main process at once. Needs profile.user. */
  password: v.nullable(
    v.pipe(
      v.string(),
      v.minLength(1, 'the password is empty'),
      v.maxLength(1024, 'a password has at most 1024 characters'),
    ),
  ),
  /** The Wi-Fi passphrase in clear: turned into its WPA PSK with the profile's SSID at once. Needs profile.wifi. */
  wifiPassword: v.nullable(v.pipe(v.string(), v.maxLength(64, 'a Wi-Fi password has 8 to 63 characters'))),
});
export type CustomisationDraft = v.InferOutput<typeof CustomisationDraftSchema>;

/** How many cards a preview is for: as many as a flash may write. */
export const PreviewCardsSchema = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(64));

/** What customising the chosen image writes, before anything is: the method, why, and each card's files. */
export interface CustomisationPreview {
  method: CustomisationMethod;
  why: string;
  /** Per card, in target order: the boot partition's files written, with their sizes. */
  files: { name: string; size: number }[][];
  /** The host name each card gets (null: the image's own). */
  hostnames: (string | null)[];
}

/** A public key file found in ~/.ssh (id_*.pub), offered for import. */
export interface SshKeyFile {
  /** Its name in ~/.ssh, such as id_ed25519.pub. */
  name: string;
  /** Its keys, each checked to be a public key; empty when it holds none that is. */
  keys: string[];
  /** Why it is not offered, when it cannot be read or is not a public key file. */
  problem: string | null;
}
