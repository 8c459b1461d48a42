import { JobError } from '../../common/domain/failure.js';
import type { ImageRequest, PreparedImage } from '../../user/images/probe.js';
import { prepareImageInChild } from '../../user/images/probe-launch.js';
import { EXIT } from '../exit-codes.js';

/**
 * Probes the image for a command in a probe process (user/images/probe-launch.ts), as the app does,
 * or says why it cannot be used and returns the exit code.
 */
export async function prepareCliImage(request: ImageRequest): Promise<PreparedImage | number> {
  try {
    return await prepareImageInChild(request);
  } catch (error) {
    if (!(error instanceof JobError)) throw error;
    process.stderr.write(`sluice: ${error.message}\n`);
    return error.failure.code === 'unsupported-format' ? EXIT.unsupportedFormat : EXIT.failed;
  }
}
