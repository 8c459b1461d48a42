import { JobError } from '../../common/domain/failure.js';
import { prepareImage, type ImageRequest, type PreparedImage } from '../../user/images/probe.js';
import { EXIT } from '../exit-codes.js';

/** Probes the image for a command, or says why it cannot be used and returns the exit code. */
export async function prepareCliImage(request: ImageRequest): Promise<PreparedImage | number> {
  try {
    return await prepareImage(request);
  } catch (error) {
    if (!(error instanceof JobError)) throw error;
    process.stderr.write(`sluice: ${error.message}\n`);
    return error.failure.code === 'unsupported-format' ? EXIT.unsupportedFormat : EXIT.failed;
  }
}
