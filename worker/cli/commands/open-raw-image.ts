import { ImageError, openImage, type OpenedImage } from '../../sources/open-image.js';
import { EXIT } from '../exit-codes.js';

/** Opens the image for a command, or says why not and returns the exit code. */
export async function openRawImage(path: string): Promise<OpenedImage | number> {
  let image: OpenedImage;
  try {
    image = await openImage(path);
  } catch (error) {
    if (!(error instanceof ImageError)) throw error;
    process.stderr.write(`sluice: ${error.message}\n`);
    return EXIT.failed;
  }
  if (image.format !== 'raw') {
    await image.close();
    process.stderr.write(`sluice: ${path} is a ${image.format} archive. This version writes raw images (.img, .iso, .bin, .raw) only; decompress it first.\n`);
    return EXIT.unsupportedFormat;
  }
  return image;
}
