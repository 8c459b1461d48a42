import { cutShortFailure } from '../../common/domain/cut-short.js';
import { unbootableAdvice, unbootableAsWritten } from '../../common/domain/disc.js';
import { DRIVE_INCOMPLETE } from '../../common/domain/result.js';
import { formatBytes } from '../../common/domain/units.js';
import { startHelper } from '../../user/launcher/launch.js';
import { decoderOutputFor, readsOneDecodedCopy } from '../../user/launcher/transport.js';
import type { Elevation } from '../../user/launcher/elevation/types.js';
import { cliHelperOptions } from '../helper-options.js';
import type { ImageInfo } from '../../common/domain/image.js';
import { openSourceFeed } from '../../user/images/feed/source-feed.js';
import type { WarmDecoder } from '../../user/images/processes/decoder-launch.js';
import { decoderLikely, startFlashAhead, warmDecoderFor, type AheadRequest, type FlashAhead } from '../flash-ahead.js';
import type { HelperJob } from '../../common/contracts/helper-protocol.js';
import type { Progress } from '../../common/domain/progress.js';
import { wantsCustomisation } from '../customise-flags.js';
import { cancelOnSigint } from '../cancel.js';
import { EXIT, exitCodeFor } from '../exit-codes.js';
import { namedDrives } from '../drive-names.js';
import { confirm } from '../prompt.js';
import { createReporter } from '../reporter.js';
import { describeSize } from '../render.js';
import { isFileTarget } from '../target-kind.js';
import { prepareCliCatalogueImage, prepareCliImage, type CliCustomisation } from './prepare-cli-image.js';
import { OS_PREFIX } from '../../common/domain/catalogue.js';
import { judgeTargets, listTargetDrives, mediaOf, refuseTargets, type JudgedTarget } from './target-verdicts.js';
import type { CustomiseFlags } from '../customise-flags.js';
import type { PreparedCustomisation } from '../../common/domain/customisation.js';
import { customisationLine } from '../render.js';
import { staged } from '../../common/app/bottleneck.js';
import { imageCache } from '../catalogue.js';

export interface FlashArgs {
  /** A path, an http(s) URL, or a catalogue entry (os:PATH or os:NAME). */
  image: string;
  /** --repo: the catalogues an os: image is looked for in (default: Raspberry Pi's). */
  repos?: string[] | undefined;
  /** --no-cache: an os: image is downloaded without being kept (and not read from the cache). */
  cache?: boolean | undefined;
  /** --cache-limit: the image cache's size limit in bytes. */
  cacheLimit?: number | undefined;
  /** --sha256 HEX: the checksum the image (as stored, before decoding) must have. */
  sha256?: string | undefined;
  /** --bmap FILE, or false for --no-bmap (ignore a map next to the image). */
  bmap?: string | false | undefined;
  /** Use the system's xz, zstd and bzip2 where present (off: --builtin-decoders). */
  systemTools: boolean;
  targets: string[];
  verify: boolean;
  /** Check each drive for fake capacity (on unless --no-capacity-check). */
  capacityCheck: boolean;
  /** Eject each drive after a good write (on unless --no-eject). */
  eject: boolean;
  yes: boolean;
  json: boolean;
  /** How to get root when not root already; default: sudo in a terminal, pkexec otherwise. */
  elevate?: 'sudo' | 'pkexec' | undefined;
  /** --allow-truncated: write an image whose partitions reach past its end (see common/domain/cut-short.ts). */
  allowTruncated: boolean;
  /** --exact: write every byte, with no block map and no free space left out (common/domain/skipped.ts). */
  exact: boolean;
  /** The customisation flags (--hostname, --user, ...). */
  customise?: CustomiseFlags | undefined;
}

/** Whether the cards `targets` read one decoded copy of the image (readsOneDecodedCopy), as `elevation` allows. */
function decodesOnceFor(targets: readonly string[], elevation: Elevation | undefined): boolean {
  return readsOneDecodedCopy(targets.length, decoderOutputFor(elevation));
}

/** Asks before erasing, naming each drive the way its owner knows it. */
async function confirmErase(
  info: ImageInfo,
  judged: readonly JudgedTarget[],
  customised: PreparedCustomisation | null,
): Promise<boolean> {
  const names = judged.map(({ target, drive }) => {
    const description = drive?.description || 'unnamed drive';
    return `  ${target}  ${description}${drive?.size ? `, ${formatBytes(drive.size)}` : ''}`;
  });
  process.stderr.write(
    `This will ERASE everything on:\n${names.join('\n')}\nand write ${info.source} (${describeSize(info)})${customised === null ? '' : `, ${customisationLine(customised)}`}.\n`,
  );
  return confirm('Continue?');
}

/** `sluice flash IMAGE DEVICE... | FILE [--sha256 HEX] [--bmap FILE | --no-bmap | --exact] [--allow-truncated] [--no-verify] [--no-eject] [--yes] [--json] [--elevate sudo|pkexec]` */
export async function flashCommand(args: FlashArgs): Promise<number> {
  const targets = await namedDrives(args.targets);
  const fileTargets = (await Promise.all(targets.map(isFileTarget))).filter(Boolean).length;
  const request: AheadRequest = {
    image: args.image,
    bmap: args.bmap,
    exact: args.exact,
    fileTarget: fileTargets > 0,
    customising: args.customise !== undefined && wantsCustomisation(args.customise),
  };
  const helperOptions = cliHelperOptions(args.elevate);
  // Several cards from a decoder get the image decoded once into a file (openSourceFeed's
  // decodeOnce): a decoder warmed for a pipe, and a helper started on it, would go unused.
  const decodesOnce = decodesOnceFor(targets, helperOptions.elevation) && decoderLikely(request);
  const warm = decodesOnce ? null : warmDecoderFor(request, decoderOutputFor(helperOptions.elevation));
  const ahead = decodesOnce ? Promise.resolve(null) : startFlashAhead(request, targets, warm, helperOptions);
  try {
    const early = await ahead;
    // The helper is spawned before the probe and the drive listing start: it has the most to load,
    // and the job waits for it, so its start overlaps theirs instead of following them.
    // From here the feed may also close the file, or stop the decoder, the helper was started with: it has its own copy.
    await early?.spawned;
    return await flashNamed(args, targets, fileTargets, { warm, early, helperOptions });
  } finally {
    // Taken by the flash if it got that far; stopped here if it ended before.
    await (await ahead)?.dispose();
    await warm?.dispose();
  }
}

/** What the flash started while its image was probed (flash-ahead.ts), and how it starts the helper. */
interface Started {
  warm: WarmDecoder | null;
  /** Spawned already (flashCommand waits for it). */
  early: FlashAhead | null;
  helperOptions: ReturnType<typeof cliHelperOptions>;
}

/** The image `args` names, from a file, a URL or the catalogue, prepared and customised; or the exit code when it cannot be. */
async function prepareNamed(args: FlashArgs, customise: CliCustomisation | undefined) {
  const catalogue = args.image.startsWith(OS_PREFIX)
    ? await prepareCliCatalogueImage(
        args.image.slice(OS_PREFIX.length),
        { repos: args.repos, cache: args.cache !== false, cacheLimit: args.cacheLimit },
        args.systemTools,
        customise,
      )
    : null;
  if (typeof catalogue === 'number') return catalogue;
  const prepared =
    catalogue?.prepared ??
    (await prepareCliImage(
      {
        image: args.image,
        sha256: args.sha256,
        bmap: args.exact ? false : args.bmap,
        systemTools: args.systemTools,
        partitions: false,
      },
      customise,
    ));
  if (typeof prepared === 'number') return prepared;
  const cutShort = cutShortFailure(prepared.info);
  if (cutShort !== null && !args.allowTruncated) {
    process.stderr.write(
      `sluice: ${cutShort.message} To write it anyway, pass --allow-truncated. Nothing was written.\n`,
    );
    return EXIT.failed;
  }
  if (cutShort !== null)
    process.stderr.write(`sluice: warning: ${cutShort.message} Writing it anyway (--allow-truncated).\n`);
  return { catalogue, prepared };
}

async function flashNamed(
  args: FlashArgs,
  targets: string[],
  fileTargets: number,
  { warm, early, helperOptions }: Started,
): Promise<number> {
  if (fileTargets > 0 && targets.length > 1) {
    process.stderr.write('sluice: a file is written on its own: name either one file or one or more drives.\n');
    return EXIT.usage;
  }
  const customise = args.customise === undefined ? undefined : { flags: args.customise, cards: targets.length };
  // Listed while the image is probed; judged once the image's size is known.
  const listing = fileTargets > 0 ? null : listTargetDrives(targets);
  const named = await prepareNamed(args, customise);
  if (typeof named === 'number') return named;
  const { catalogue, prepared } = named;
  const [fileTarget] = fileTargets > 0 ? targets : [];
  if (fileTarget !== undefined)
    return (await import('./flash-to-file.js')).flashToFileCommand(prepared, {
      image: args.image,
      target: fileTarget,
      verify: args.verify,
      yes: args.yes,
      json: args.json,
    });
  const { info, customisation } = prepared;
  const interactive = process.stdin.isTTY === true;
  const unbootable = unbootableAsWritten(info);
  if (unbootable !== null) {
    // Said before the drive is looked at, so that a script learns it from its first run.
    process.stderr.write(
      `sluice: ${args.yes || interactive ? 'warning: ' : ''}${unbootable} ${args.yes ? 'Writing it as it is (--yes).' : interactive ? '' : `${info.disc === null ? '' : unbootableAdvice(info.disc)} Nothing was written.`}\n`,
    );
    if (!args.yes && !interactive) return EXIT.failed;
  }
  if (!args.yes && !interactive) {
    process.stderr.write(
      'sluice: refusing to erase a drive without confirmation; pass --yes when running without a terminal.\n',
    );
    return EXIT.usage;
  }
  const reporter = createReporter(args.json);
  const judged = await judgeTargets(
    args.image,
    { size: info.size, atLeast: !info.sizeExact },
    targets,
    listing ?? undefined,
  );
  const refused = await refuseTargets(judged, interactive && !args.yes);
  if (refused.length > 0) {
    // One refused drive stops the whole job: the user asked for all of them, and gets none half-done.
    for (const r of refused) reporter.result(r);
    if (refused.length < targets.length) process.stderr.write('sluice: nothing was written to any drive.\n');
    return exitCodeFor(refused);
  }
  if (!args.yes && !(await confirmErase(info, judged, customisation))) {
    process.stderr.write('Nothing was written.\n');
    return EXIT.cancelled;
  }
  // Several cards from a decoder: the image is decoded once, into the cache, and every card reads
  // that copy at its own pace (a single card streams, with no copy).
  const decodeOnce = decodesOnceFor(targets, helperOptions.elevation)
    ? (bytes: number) => imageCache(args.cacheLimit).decodedCopy(bytes)
    : undefined;
  const feed = await openSourceFeed(prepared, {
    output: decoderOutputFor(helperOptions.elevation),
    leaveOut: args.exact ? 'nothing' : 'all',
    warm: warm ?? undefined,
    opened: early?.handOverFile(),
    decodeOnce,
  });
  feed.onNotice((message) => reporter.notice(message));
  void feed.decoder.then((decoder) => {
    reporter.source(info, decoder);
    if (customisation !== null) reporter.customisation(customisation);
  });
  // The helper is its own process even when we are root: it runs with the V8 flags that keep its
  // memory flat, and the CLI stays responsive to Ctrl-C while the helper does the I/O. When we
  // are not root it is the only part that gets root; the image is still opened, decoded and
  // downloaded as us.
  const helperJob: HelperJob = {
    kind: 'flash',
    targets,
    media: mediaOf(judged),
    ...feed.start,
    verify: args.verify,
    eject: args.eject,
    ...(args.capacityCheck ? {} : { capacityCheck: false }),
  };
  const onProgress = (p: Progress) => reporter.progress(staged(p, feed.stage()));
  const job =
    (customisation === null ? early?.run(feed, helperJob, onProgress) : null) ??
    startHelper({
      source: feed.source,
      job: helperJob,
      ...helperOptions,
      overlays: customisation?.overlays,
      onProgress,
    });
  const stopListening = cancelOnSigint(() => job.cancel(), DRIVE_INCOMPLETE);
  const results = await feed.finish(job.result, job);
  stopListening();
  await catalogue?.settle(results);
  reporter.end();
  for (const r of results) reporter.result(r);
  return exitCodeFor(results);
}
