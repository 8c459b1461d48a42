import { JobError } from '../../common/domain/failure.js';
import type { ImageRequest, PreparedImage } from '../../user/images/probe.js';
import { prepareImageInChild } from '../../user/images/probe-launch.js';
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

/**
 * Probes the image for a command in a probe process (user/images/probe-launch.ts), as the app does,
 * or says why it cannot be used and returns the exit code. With customisation flags, the settings
 * are read (passwords hashed at once) and each of `cards` cards' customisation is planned too.
 */
export async function prepareCliImage(request: ImageRequest, customise?: { flags: CustomiseFlags; cards: number }): Promise<PreparedImage | number> {
  try {
    if (customise === undefined || !wantsCustomisation(customise.flags)) return await prepareImageInChild(request);
    const { profileFromFlags, cardsOf } = await import('../customise-options.js');
    const cards = cardsOf(await profileFromFlags(customise.flags), customise.cards);
    return await prepareImageInChild(cards === null ? request : { ...request, customise: cards });
  } catch (error) {
    if (!(error instanceof JobError)) throw error;
    process.stderr.write(`sluice: ${error.message}\n`);
    return exitFor(error);
  }
}
