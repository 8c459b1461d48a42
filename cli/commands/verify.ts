import type { TargetResult } from '../../common/domain/result.js';
import { verifyImage } from '../../writer/verify-image.js';
import { startHelper } from '../../user/launcher/launch.js';
import { decoderOutputFor } from '../../user/launcher/transport.js';
import { cliHelperOptions } from '../helper-options.js';
import { mediumId } from '../../user/drives/medium.js';
import type { PreparedImage } from '../../user/images/probe/probe.js';
import { openSourceFeed, wholeImageListener } from '../../user/images/feed/source-feed.js';
import { cancelOnSigint } from '../cancel.js';
import { namedDrives } from '../drive-names.js';
import { EXIT, exitCodeFor } from '../exit-codes.js';
import { createReporter, type Reporter } from '../reporter.js';
import { isFileTarget } from '../target-kind.js';
import { OS_PREFIX } from '../../common/domain/catalogue.js';
import { prepareCliCatalogueImage, prepareCliImage } from './prepare-cli-image.js';
import type { CustomiseFlags } from '../customise-flags.js';
import { overlayPieces } from '../../user/customise/prepare.js';

export interface VerifyArgs {
  image: string;
  target: string;
  json: boolean;
  elevate?: 'sudo' | 'pkexec' | undefined;
  /** --exact: compare every byte, as `flash --exact` writes them. */
  exact: boolean;
  /** The customisation the drive was flashed with: compared in place of the image's bytes there. */
  customise?: CustomiseFlags | undefined;
  /** --repo: the catalogues an os: image is looked for in, as for flash. */
  repos?: readonly string[] | undefined;
  /** --no-cache: an os: image is downloaded without being kept (and not read from the cache). */
  cache?: boolean | undefined;
  cacheLimit?: number | undefined;
}

/**
 * `sluice verify IMAGE|os:ENTRY DEVICE|FILE [--exact] [--json] [--elevate sudo|pkexec] [customisation flags]`:
 * compares a written device (or file) with the image, decoding it if it is compressed; writes
 * nothing. A drive is compared under the rule a flash writes it by (common/domain/skipped.ts): what
 * the block map and the free space leave out is not compared, and the result says how much that
 * was. A file, which a flash writes whole, is compared whole, and so is a drive with --exact. With
 * the customisation flags the drive was flashed with, its customisation is compared too, in place
 * of the image's bytes there.
 */
export async function verifyCommand(args: VerifyArgs): Promise<number> {
  // A drive is read by the helper, like every drive Sluice opens, so it gets root the way a flash
  // does; a file is the user's own and is read here.
  const [target = args.target] = await namedDrives([args.target]);
  const toFile = await isFileTarget(target);
  // The card in the drive now, before the image is prepared (a download may take minutes): the helper compares no other.
  const medium = toFile ? null : await mediumId(target);
  const customise = args.customise === undefined ? undefined : { flags: args.customise, cards: 1 };
  const catalogue = args.image.startsWith(OS_PREFIX)
    ? await prepareCliCatalogueImage(
        args.image.slice(OS_PREFIX.length),
        { repos: args.repos, cache: args.cache !== false, cacheLimit: args.cacheLimit },
        true,
        customise,
        'verify',
      )
    : null;
  if (typeof catalogue === 'number') return catalogue;
  const prepared =
    catalogue?.prepared ??
    (await prepareCliImage(
      { image: args.image, bmap: toFile || args.exact ? false : undefined, partitions: false },
      customise,
    ));
  if (typeof prepared === 'number') return prepared;
  const reporter = createReporter(args.json, toFile ? 'verify-file' : 'verify');
  const verified = toFile
    ? await verifyFileHere(prepared, target, reporter)
    : await verifyDriveInHelper(prepared, target, medium, args, reporter);
  if (typeof verified === 'number') return verified;
  // A cached download that failed its checksum is removed, as after a flash.
  await catalogue?.settle(verified);
  reporter.end();
  for (const r of verified) reporter.result(r);
  return exitCodeFor(verified);
}

async function verifyFileHere(
  prepared: PreparedImage,
  target: string,
  reporter: Reporter,
): Promise<TargetResult[] | number> {
  // verifyImage reads a descriptor: a kernel pipe from the decoder rather than the helper's socket.
  const feed = await openSourceFeed(prepared, { output: 'descriptor', leaveOut: 'unmapped' });
  if (typeof feed.source !== 'number') {
    await feed.close();
    process.stderr.write(
      `sluice: verifying a ${prepared.info.format} image is not supported on this system; decompress it first.\n`,
    );
    return EXIT.unsupportedFormat;
  }
  const controller = new AbortController();
  const stopListening = cancelOnSigint(() => controller.abort(), 'Nothing was written.');
  const card = prepared.customisation?.overlays[0];
  const overlay = card === undefined ? undefined : Promise.resolve(overlayPieces(card));
  const result = verifyImage({
    source: feed.source,
    imageSize: prepared.imageSize,
    target,
    overlay,
    signal: controller.signal,
    onProgress: (p) => reporter.progress(p),
  }).then((r) => [r]);
  // A decoder's failure makes the comparison meaningless: its reason is the result.
  const results = await feed.finish(
    result,
    wholeImageListener(() => undefined),
  );
  stopListening();
  return results;
}

async function verifyDriveInHelper(
  prepared: PreparedImage,
  target: string,
  medium: string | null,
  args: VerifyArgs,
  reporter: Reporter,
): Promise<TargetResult[]> {
  const helperOptions = cliHelperOptions(args.elevate);
  const feed = await openSourceFeed(prepared, {
    output: decoderOutputFor(helperOptions.elevation),
    leaveOut: args.exact ? 'nothing' : 'all',
  });
  const { imageSize, sourceSeekable, extents } = feed.start;
  const job = startHelper({
    source: feed.source,
    job: { kind: 'verify', target, medium, imageSize, sourceSeekable, ...(extents === undefined ? {} : { extents }) },
    ...helperOptions,
    overlays: prepared.customisation?.overlays,
    onProgress: (p) => reporter.progress(p),
  });
  const stopListening = cancelOnSigint(() => job.cancel(), 'Nothing was written.');
  // A verify job's source end decides nothing: the comparison itself finds an image cut short.
  const results = await feed.finish(job.result, { endSource: () => undefined, skip: (ranges) => job.skip(ranges) });
  stopListening();
  return results;
}
