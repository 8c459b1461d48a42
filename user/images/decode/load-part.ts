import { errorText } from '../../../common/domain/error-details.js';
import { jobError } from '../../../common/domain/failure.js';

/**
 * Loads a part of the decoder that only some images need (decode-image.ts loads each format's
 * decoder when that format comes). A part that cannot be loaded is a damaged installation, not a
 * bad image, and is reported as such rather than as a failure to read the image.
 */
export async function loadPart<T>(what: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    throw jobError(
      'internal',
      `Sluice's ${what} could not be loaded (${errorText(error)}); its installation is damaged. Please reinstall Sluice.`,
    );
  }
}
