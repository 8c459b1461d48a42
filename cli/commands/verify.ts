import type { TargetResult } from '../../common/domain/result.js';
import { verifyImage } from '../../writer/verify-image.js';
import { chooseElevation, onPath } from '../../user/launcher/elevation/choose.js';
import { startHelper } from '../../user/launcher/launch.js';
import type { PreparedImage } from '../../user/images/probe.js';
import { openSourceFeed } from '../../user/images/source-feed.js';
import { cancelOnSigint } from '../cancel.js';
import { namedDrives } from '../drive-names.js';
import { EXIT, exitCodeFor } from '../exit-codes.js';
import { createReporter, type Reporter } from '../reporter.js';
import { isFileTarget } from './flash-to-file.js';
import { prepareCliImage } from './prepare-cli-image.js';
import type { CustomiseFlags } from '../customise-flags.js';
import { overlayPieces } from '../../user/customise/prepare.js';

export interface VerifyArgs {
  image: string;
  target: string;
  json: boolean;
  elevate?: 'sudo' | 'pkexec' | undefined;
  /** The customisation the drive was flashed with: compared in place of the image's bytes there. */
  customise?: CustomiseFlags | undefined;
}

/**
 * `sluice verify IMAGE DEVICE|FILE [--json] [--elevate sudo|pkexec]`: compares a written device
 * (or file) with the image, decoding it if it is compressed; writes nothing. Every byte is
 * compared (a block map is not applied). With the customisation flags the drive was flashed with,
 * its customisation is compared too, in place of the image's bytes there.
 */
export async function verifyCommand(args: VerifyArgs): Promise<number> {
  const prepared = await prepareCliImage({ image: args.image, bmap: false, partitions: false }, args.customise === undefined ? undefined : { flags: args.customise, cards: 1 });
  if (typeof prepared === 'number') return prepared;
  const reporter = createReporter(args.json);
  // A drive is read by the helper, like every drive Sluice opens, so it gets root the way a flash
  // does; a file is the user's own and is read here.
  const [target = args.target] = await namedDrives([args.target]);
  const results = (await isFileTarget(target)) ? await verifyFileHere(prepared, target, reporter) : await verifyDriveInHelper(prepared, target, args, reporter);
  if (typeof results === 'number') return results;
  reporter.end();
  for (const r of results) reporter.result(r);
  return exitCodeFor(results);
}

async function verifyFileHere(prepared: PreparedImage, target: string, reporter: Reporter): Promise<TargetResult[] | number> {
  // verifyImage reads a descriptor: a kernel pipe from the decoder rather than the helper's socket.
  const feed = await openSourceFeed(prepared, 'descriptor');
  if (typeof feed.source !== 'number') {
    await feed.close();
    process.stderr.write(`sluice: verifying a ${prepared.info.format} image is not supported on this system; decompress it first.\n`);
    return EXIT.unsupportedFormat;
  }
  const controller = new AbortController();
  const stopListening = cancelOnSigint(() => controller.abort(), 'Nothing was written.');
  const card = prepared.customisation?.overlays[0];
  const overlay = card === undefined ? undefined : Promise.resolve(overlayPieces(card));
  const result = verifyImage({ source: feed.source, imageSize: prepared.imageSize, target, overlay, signal: controller.signal, onProgress: (p) => reporter.progress(p) }).then((r) => [r]);
  // A decoder's failure makes the comparison meaningless: its reason is the result.
  const results = await feed.finish(result, () => undefined);
  stopListening();
  return results;
}

async function verifyDriveInHelper(prepared: PreparedImage, target: string, args: VerifyArgs, reporter: Reporter): Promise<TargetResult[]> {
  const feed = await openSourceFeed(prepared);
  const interactive = process.stdin.isTTY === true;
  const job = startHelper({
    source: feed.source,
    job: { kind: 'verify', target, imageSize: prepared.imageSize },
    elevation: chooseElevation({ platform: process.platform, isRoot: process.getuid?.() === 0, frontEnd: 'cli', interactive, prefer: args.elevate, installed: onPath }),
    interactive,
    overlays: prepared.customisation?.overlays,
    onProgress: (p) => reporter.progress(p),
    onLog: (_level, message) => process.stderr.write(`sluice: ${message}\n`),
  });
  const stopListening = cancelOnSigint(() => job.cancel(), 'Nothing was written.');
  const results = await feed.finish(job.result, () => undefined);
  stopListening();
  return results;
}
