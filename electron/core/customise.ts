/**
 * The main process's side of the app's Customise step: where a password or Wi-Fi
 * passphrase typed in the form stops being one, the user's own public keys, and what customising
 * the chosen image writes. Planning runs in the probe process, as for the CLI: this process reads
 * nothing from an image.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import * as v from 'valibot';
import { ok, refuse, refused, type ApiResult } from '../../common/contracts/api-result.js';
import type { CustomisationDraft, CustomisationPreview, SshKeyFile } from '../../common/contracts/customise.js';
import type { CatalogueOs } from '../../common/domain/catalogue.js';
import {
  cardsOf,
  customisationFor,
  ProfileSchema,
  type Customisation,
  type PreparedCustomisation,
  type Profile,
} from '../../common/domain/customisation.js';
import { jobError, JobError } from '../../common/domain/failure.js';
import { hashPassword, wifiPsk } from '../../user/customise/secrets.js';
import { readPublicKeyFile } from '../../user/customise/ssh-keys.js';
import type { PreparedImage } from '../../user/images/probe/probe.js';
import { prepareImageInChild } from '../../user/images/processes/probe-launch.js';
import { sameFile } from '../../user/images/probe/probed-file.js';
import type { ProbedImage } from './image-probe.js';

/** The profile the form describes, with a typed password hashed and a typed passphrase turned into its PSK. */
export function sealDraft(draft: CustomisationDraft): ApiResult<Profile> {
  const profile = { ...draft.profile };
  if (draft.password !== null) {
    if (profile.user === null) return refuse('invalid-request', 'A password needs a user name.');
    profile.user = { ...profile.user, passwordHash: hashPassword(draft.password) };
  }
  if (draft.wifiPassword !== null) {
    if (profile.wifi === null) return refuse('invalid-request', 'A Wi-Fi password needs a network name (SSID).');
    try {
      profile.wifi = { ...profile.wifi, psk: wifiPsk(draft.wifiPassword, profile.wifi.ssid) };
    } catch (error) {
      if (error instanceof JobError) return refused(error.failure);
      throw error;
    }
  }
  // Checked again as a whole: the hash and the PSK must fit the schema the settings file keeps.
  const parsed = v.safeParse(ProfileSchema, profile);
  return parsed.success ? ok(parsed.output) : refuse('invalid-request', parsed.issues.map((i) => i.message).join('; '));
}

/** Public key files are named id_<type>.pub by ssh-keygen; more than this many is not a key folder. */
const MAX_KEY_FILES = 32;

/** The id_*.pub files in `sshDir`, each with its keys or why it is not offered. */
export async function sshKeyFiles(sshDir: string): Promise<SshKeyFile[]> {
  let names: string[];
  try {
    names = await readdir(sshDir);
  } catch {
    // No ~/.ssh (or none readable): nothing to offer, which the form says.
    return [];
  }
  const files = names
    .filter((name) => /^id_[A-Za-z0-9_-]+\.pub$/.test(name))
    .sort()
    .slice(0, MAX_KEY_FILES);
  return Promise.all(
    files.map(async (name): Promise<SshKeyFile> => {
      try {
        return { name, keys: await readPublicKeyFile(join(sshDir, name)), problem: null };
      } catch (error) {
        return { name, keys: [], problem: error instanceof JobError ? error.message : String(error) };
      }
    }),
  );
}

/** An image prepared with each card's customisation planned, as a flash takes it. */
export interface Customised {
  prepared: PreparedImage;
  customisation: PreparedCustomisation;
}

/** The customisation a probe asked for `cards` planned (probe-launch.ts refuses an answer without it). */
export function customisedOf(prepared: PreparedImage): Customised {
  if (prepared.customisation === null)
    throw jobError('protocol-error', 'The image probe planned no customisation; nothing was written.');
  return { prepared, customisation: prepared.customisation };
}

/** Prepares a catalogue entry with each card's customisation planned (electron/core/app-catalogue.ts). */
export type PrepareCatalogueOs = (os: CatalogueOs, cards: Customisation[]) => Promise<PreparedImage>;

/**
 * The chosen image prepared again with each of `count` cards' customisation planned, in the probe
 * process; a catalogue entry through `fromCatalogue`, whose init_format chooses the method where
 * the image cannot tell. Throws cannot-customise (no method, no room, settings the method cannot
 * take) and image-changed (the file is not the one that was chosen) before anything is written.
 */
export async function prepareCustomised(
  chosen: ProbedImage,
  profile: Profile,
  count: number,
  fromCatalogue: PrepareCatalogueOs,
): Promise<Customised | null> {
  const cards = cardsOf(profile, count);
  if (cards === null) return null;
  if (chosen.source.kind === 'drive')
    throw jobError('cannot-customise', 'A copied drive is written bit for bit: it cannot be customised.');
  if (chosen.source.kind === 'catalogue') return customisedOf(await fromCatalogue(chosen.source.os, cards));
  const prepared = await prepareImageInChild({ image: chosen.info.source, partitions: true, customise: cards });
  if (chosen.local !== null && (prepared.identity === null || !sameFile(chosen.local.identity, prepared.identity))) {
    throw jobError(
      'image-changed',
      `${chosen.info.name} changed on disk after it was chosen. Choose it again to check it.`,
    );
  }
  return customisedOf(prepared);
}

/** What `profile` writes onto each of `count` cards with the chosen image. */
export async function previewCustomisation(
  chosen: ProbedImage,
  profile: Profile,
  count: number,
  fromCatalogue: PrepareCatalogueOs,
): Promise<ApiResult<CustomisationPreview>> {
  try {
    const planned = await prepareCustomised(chosen, profile, count, fromCatalogue);
    if (planned === null)
      return refuse('invalid-request', 'Nothing to customise: every setting is left as the image has it.');
    const { method, why, files } = planned.customisation;
    const hostnames = files.map((_, i) => customisationFor(profile, profile.nextCard + i).hostname);
    return ok({ method, why, files, hostnames });
  } catch (error) {
    if (error instanceof JobError) return refused(error.failure);
    throw error;
  }
}
