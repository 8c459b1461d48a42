import { verifyImage } from '../../engine/verify-image.js';
import { cancelOnSigint } from '../cancel.js';
import { exitCodeFor } from '../exit-codes.js';
import { createReporter } from '../reporter.js';
import { openRawImage } from './open-raw-image.js';

/** `sluice verify IMAGE DEVICE [--json]`: compares a written device with the image; writes nothing. */
export async function verifyCommand(imagePath: string, target: string, json: boolean): Promise<number> {
  const image = await openRawImage(imagePath);
  if (typeof image === 'number') return image;
  try {
    const controller = new AbortController();
    const reporter = createReporter(json);
    const stopListening = cancelOnSigint(() => controller.abort());
    const result = await verifyImage({
      source: image.fd,
      imageSize: image.fileSize,
      target,
      signal: controller.signal,
      onProgress: (p) => reporter.progress(p),
    });
    stopListening();
    reporter.end();
    reporter.result(result);
    return exitCodeFor([result]);
  } finally {
    await image.close();
  }
}
