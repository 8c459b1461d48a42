import { pathText } from '../../common/domain/catalogue.js';
import { JobError } from '../../common/domain/failure.js';
import type { ImageCache } from '../../user/cache/image-cache.js';
import { prepareCatalogueImage, type CatalogueImage } from '../../user/catalogue/catalogue-image.js';
import type { ImageRequest, PreparedImage } from '../../user/images/probe.js';
import { prepareImageInChild } from '../../user/images/probe-launch.js';
import { findCatalogueEntry } from '../catalogue.js';
import { EXIT } from '../exit-codes.js';

/** Says why an image cannot be used, and returns the exit code. */
function refused(error: unknown): number {
  if (!(error instanceof JobError)) throw error;
  process.stderr.write(`sluice: ${error.message}\n`);
  return error.failure.code === 'unsupported-format' ? EXIT.unsupportedFormat : EXIT.failed;
}

/**
 * Probes the image for a command in a probe process (user/images/probe-launch.ts), as the app does,
 * or says why it cannot be used and returns the exit code.
 */
export async function prepareCliImage(request: ImageRequest): Promise<PreparedImage | number> {
  try {
    return await prepareImageInChild(request);
  } catch (error) {
    return refused(error);
  }
}

/**
 * Finds the catalogue entry `wanted` names (os:PATH or os:NAME, without the prefix) in `sources`
 * and prepares it: from the image cache, or downloaded into it while it is written
 * (user/catalogue/catalogue-image.ts). Or says why not and returns the exit code.
 */
export async function prepareCliCatalogueImage(wanted: string, sources: readonly string[], cache: ImageCache | null, systemTools: boolean): Promise<CatalogueImage | number> {
  try {
    const placed = await findCatalogueEntry(sources, wanted);
    const image = await prepareCatalogueImage(placed.os, { cache, systemTools, partitions: false });
    const how = image.from === 'cache' ? 'from the image cache, nothing to download' : image.from === 'file' ? 'a file on this computer' : image.cached ? 'downloaded while it is written, and kept in the image cache' : 'downloaded while it is written';
    process.stderr.write(`sluice: ${pathText(placed.path)}: ${how}.\n`);
    for (const note of image.notes) process.stderr.write(`sluice: ${note}\n`);
    return image;
  } catch (error) {
    return refused(error);
  }
}
