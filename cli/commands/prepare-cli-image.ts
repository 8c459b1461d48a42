import { cardsOf, type Customisation } from '../../common/domain/customisation.js';
import { pathText } from '../../common/domain/catalogue.js';
import { JobError } from '../../common/domain/failure.js';
import type { CatalogueImage } from '../../user/catalogue/catalogue-image.js';
import type { ImageRequest, PreparedImage } from '../../user/images/probe/probe.js';
import { prepareImageInChild } from '../../user/images/processes/probe-launch.js';
import { wantsCustomisation, type CustomiseFlags } from '../customise-flags.js';
import { EXIT } from '../exit-codes.js';

/** The exit code for a refusal before anything started. */
function exitFor(error: JobError): number {
  switch (error.failure.code) {
    case 'unsupported-format':
      return EXIT.unsupportedFormat;
    // Settings that do not fit, or an image that cannot take them: the command as asked cannot run.
    case 'invalid-request':
    case 'cannot-customise':
      return EXIT.usage;
    default:
      return EXIT.failed;
  }
}

/** Says why an image cannot be used, and returns the exit code. */
function refused(error: unknown): number {
  if (!(error instanceof JobError)) throw error;
  process.stderr.write(`sluice: ${error.message}\n`);
  return exitFor(error);
}

/**
 * Probes the image for a command in a probe process (user/images/processes/probe-launch.ts), as the app does,
 * or says why it cannot be used and returns the exit code. With customisation flags, the settings
 * are read (passwords hashed at once) and each of `cards` cards' customisation is planned too.
 */
export async function prepareCliImage(
  request: ImageRequest,
  customise?: CliCustomisation,
): Promise<PreparedImage | number> {
  try {
    const cards = await cardsFromFlags(customise);
    return await prepareImageInChild(cards === undefined ? request : { ...request, customise: cards });
  } catch (error) {
    return refused(error);
  }
}

/** The customisation flags of a command that writes `cards` cards. */
export interface CliCustomisation {
  flags: CustomiseFlags;
  cards: number;
}

/** Each card's settings from the flags (passwords hashed at once); undefined when they set nothing. */
async function cardsFromFlags(customise: CliCustomisation | undefined): Promise<Customisation[] | undefined> {
  if (customise === undefined || !wantsCustomisation(customise.flags)) return undefined;
  const { profileFromFlags } = await import('../customise-options.js');
  return cardsOf(await profileFromFlags(customise.flags), customise.cards) ?? undefined;
}

/** Where an os: image is looked for (--repo) and whether the image cache is used (--no-cache, --cache-limit). */
export interface CatalogueChoice {
  repos: readonly string[] | undefined;
  cache: boolean;
  cacheLimit?: number | undefined;
}

/**
 * What a command does with a catalogue entry: flash and verify read it whole (a download is kept
 * in the cache as it is read, so the next flash or check needs no network); info reads only what
 * the probe needs, from the cache when it holds the entry, and keeps nothing.
 */
export type CatalogueUse = 'flash' | 'verify' | 'info';

const READ_AS: Record<CatalogueUse, string> = {
  flash: 'downloaded while it is written',
  verify: 'downloaded while it is compared',
  info: 'read from its web address',
};

/**
 * Finds the catalogue entry `wanted` names (os:PATH or os:NAME, without the prefix) in `where`
 * and prepares it for `use`: from the image cache, or downloaded (and kept in the cache) as it is
 * read (user/catalogue/catalogue-image.ts), with each card's customisation planned when the flags
 * ask for one (by the method the entry's init_format chooses where the image cannot tell). Or
 * says why not and returns the exit code.
 */
export async function prepareCliCatalogueImage(
  wanted: string,
  where: CatalogueChoice,
  systemTools: boolean,
  customise?: CliCustomisation,
  use: CatalogueUse = 'flash',
): Promise<CatalogueImage | number> {
  try {
    // The catalogue's and the cache's modules load for os: images only: importing flash.js took
    // 57 ms of CPU with them, 41 ms without.
    const [{ findCatalogueEntry, imageCache, repositories }, { prepareCatalogueImage }] = await Promise.all([
      import('../catalogue.js'),
      import('../../user/catalogue/catalogue-image.js'),
    ]);
    const placed = await findCatalogueEntry(repositories(where.repos), wanted);
    const cache = where.cache ? imageCache(where.cacheLimit) : null;
    const image = await prepareCatalogueImage(placed.os, {
      cache,
      keep: use !== 'info',
      systemTools,
      partitions: use === 'info',
      customise: await cardsFromFlags(customise),
    });
    const how =
      image.from === 'cache'
        ? 'from the image cache, nothing to download'
        : image.from === 'file'
          ? 'a file on this computer'
          : `${READ_AS[use]}${image.cached ? ', and kept in the image cache' : ''}`;
    process.stderr.write(`sluice: ${pathText(placed.path)}: ${how}.\n`);
    for (const note of image.notes) process.stderr.write(`sluice: ${note}\n`);
    return image;
  } catch (error) {
    return refused(error);
  }
}
