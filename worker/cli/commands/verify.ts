import { verifyImage } from '../../engine/verify-image.js';
import { openSourceFeed } from '../../sources/source-feed.js';
import { cancelOnSigint } from '../cancel.js';
import { EXIT, exitCodeFor } from '../exit-codes.js';
import { createReporter } from '../reporter.js';
import { prepareCliImage } from './prepare-cli-image.js';

/**
 * `sluice verify IMAGE DEVICE [--json]`: compares a written device with the image, decoding it
 * if it is compressed; writes nothing. Every byte is compared (a block map is not applied).
 */
export async function verifyCommand(imagePath: string, target: string, json: boolean): Promise<number> {
  const prepared = await prepareCliImage({ image: imagePath, bmap: false, partitions: false });
  if (typeof prepared === 'number') return prepared;
  // verifyImage reads a descriptor: a kernel pipe from the decoder rather than the flash's socket.
  const feed = await openSourceFeed(prepared, 'descriptor');
  if (typeof feed.source !== 'number') {
    await feed.close();
    process.stderr.write(`sluice: verifying a ${prepared.info.format} image is not supported on this system; decompress it first.\n`);
    return EXIT.unsupportedFormat;
  }
  const controller = new AbortController();
  const reporter = createReporter(json);
  const stopListening = cancelOnSigint(() => controller.abort());
  const result = verifyImage({
    source: feed.source,
    imageSize: prepared.imageSize,
    target,
    signal: controller.signal,
    onProgress: (p) => reporter.progress(p),
  }).then((r) => [r]);
  // A decoder's failure makes the comparison meaningless: its reason is the result.
  const results = await feed.finish(result, () => undefined);
  stopListening();
  reporter.end();
  for (const r of results) reporter.result(r);
  return exitCodeFor(results);
}
