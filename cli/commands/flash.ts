import { cutShortFailure } from '../../common/domain/cut-short.js';
import { DRIVE_INCOMPLETE } from '../../common/domain/result.js';
import { formatBytes } from '../../common/domain/units.js';
import { startHelper } from '../../user/launcher/launch.js';
import { cliHelperOptions } from '../helper-options.js';
import { isUrl, type ImageInfo } from '../../common/domain/image.js';
import { openSourceFeed } from '../../user/images/source-feed.js';
import { WarmDecoder } from '../../user/images/decoder-launch.js';
import { bmapCandidates } from '../../user/images/block-maps.js';
import { existsSync } from 'node:fs';
import { cancelOnSigint } from '../cancel.js';
import { EXIT, exitCodeFor } from '../exit-codes.js';
import { namedDrives } from '../drive-names.js';
import { confirm } from '../prompt.js';
import { createReporter } from '../reporter.js';
import { describeSize } from '../render.js';
import { isFileTarget } from '../target-kind.js';
import { prepareCliCatalogueImage, prepareCliImage } from './prepare-cli-image.js';
import { OS_PREFIX } from '../../common/domain/catalogue.js';
import { judgeTargets, listTargetDrives, mediaOf, refuseTargets, type JudgedTarget } from './target-verdicts.js';
import type { CustomiseFlags } from '../customise-flags.js';
import type { PreparedCustomisation } from '../../common/domain/customisation.js';
import { customisationLine } from '../render.js';
import { staged } from '../../common/app/bottleneck.js';

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

/** Asks before erasing, naming each drive the way its owner knows it. */
async function confirmErase(info: ImageInfo, judged: readonly JudgedTarget[], customised: PreparedCustomisation | null): Promise<boolean> {
  const names = judged.map(({ target, drive }) => {
    const description = drive?.description || 'unnamed drive';
    return `  ${target}  ${description}${drive?.size ? `, ${formatBytes(drive.size)}` : ''}`;
  });
  process.stderr.write(`This will ERASE everything on:\n${names.join('\n')}\nand write ${info.source} (${describeSize(info)})${customised === null ? '' : `, ${customisationLine(customised)}`}.\n`);
  return confirm('Continue?');
}

/**
 * Names that an image read through a decoder goes by (a download always is). Only a guess, made
 * before the probe reads the file, about whether a decoder process will run: a wrong one costs a
 * process started for nothing, or the head start missed. The format itself is never taken from a
 * name (user/images/detect-format.ts).
 */
const DECODED_NAME = /\.(xz|gz|tgz|zst|zstd|bz2|zip|dmg|qcow2)$/i;

/**
 * The decoder process, started while the image is probed when one will likely run: its start
 * (about 75 ms) then overlaps the probe's instead of following it. None for a catalogue entry,
 * which is found and probed over the network first, or a file target. A raw image runs a decoder
 * under a block map (it sends only the mapped ranges, and checks their digests), so a map next to
 * it counts: only whether one exists is looked at here, the probe reads it.
 */
function warmDecoderFor(args: FlashArgs, fileTarget: boolean): WarmDecoder | null {
  const { image } = args;
  if (fileTarget || image.startsWith(OS_PREFIX)) return null;
  const mapped = !args.exact && args.bmap !== false && (args.bmap !== undefined || bmapCandidates(image).some((name) => existsSync(name)));
  return isUrl(image) || DECODED_NAME.test(image) || mapped ? new WarmDecoder() : null;
}

/** `sluice flash IMAGE DEVICE... | FILE [--sha256 HEX] [--bmap FILE | --no-bmap | --exact] [--allow-truncated] [--no-verify] [--no-eject] [--yes] [--json] [--elevate sudo|pkexec]` */
export async function flashCommand(args: FlashArgs): Promise<number> {
  const targets = await namedDrives(args.targets);
  const fileTargets = (await Promise.all(targets.map(isFileTarget))).filter(Boolean).length;
  const warm = warmDecoderFor(args, fileTargets > 0);
  try {
    return await flashNamed(args, targets, fileTargets, warm);
  } finally {
    // Taken by the image feed if it ran; stopped here if the flash ended before that.
    await warm?.dispose();
  }
}

async function flashNamed(args: FlashArgs, targets: string[], fileTargets: number, warm: WarmDecoder | null): Promise<number> {
  if (fileTargets > 0 && targets.length > 1) {
    process.stderr.write('sluice: a file is written on its own: name either one file or one or more drives.\n');
    return EXIT.usage;
  }
  const customise = args.customise === undefined ? undefined : { flags: args.customise, cards: targets.length };
  // Listed while the image is probed; judged once the image's size is known.
  const listing = fileTargets > 0 ? null : listTargetDrives();
  const catalogue = args.image.startsWith(OS_PREFIX) ? await prepareCliCatalogueImage(args.image.slice(OS_PREFIX.length), { repos: args.repos, cache: args.cache !== false, cacheLimit: args.cacheLimit }, args.systemTools, customise) : null;
  if (typeof catalogue === 'number') return catalogue;
  const prepared = catalogue?.prepared ?? (await prepareCliImage({ image: args.image, sha256: args.sha256, bmap: args.exact ? false : args.bmap, systemTools: args.systemTools, partitions: false }, customise));
  if (typeof prepared === 'number') return prepared;
  const cutShort = cutShortFailure(prepared.info);
  if (cutShort !== null && !args.allowTruncated) {
    process.stderr.write(`sluice: ${cutShort.message} To write it anyway, pass --allow-truncated. Nothing was written.\n`);
    return EXIT.failed;
  }
  if (cutShort !== null) process.stderr.write(`sluice: warning: ${cutShort.message} Writing it anyway (--allow-truncated).\n`);
  const [fileTarget] = fileTargets > 0 ? targets : [];
  if (fileTarget !== undefined) return (await import('./flash-to-file.js')).flashToFileCommand(prepared, { image: args.image, target: fileTarget, verify: args.verify, yes: args.yes, json: args.json });
  const { info, customisation } = prepared;
  const interactive = process.stdin.isTTY === true;
  if (!args.yes && !interactive) {
    process.stderr.write('sluice: refusing to erase a drive without confirmation; pass --yes when running without a terminal.\n');
    return EXIT.usage;
  }
  const reporter = createReporter(args.json);
  const judged = await judgeTargets(args.image, { size: info.size, atLeast: !info.sizeExact }, targets, listing ?? undefined);
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
  const feed = await openSourceFeed(prepared, { leaveOut: args.exact ? 'nothing' : 'all', warm: warm ?? undefined });
  feed.onNotice((message) => reporter.notice(message));
  void feed.decoder.then((decoder) => {
    reporter.source(info, decoder);
    if (customisation !== null) reporter.customisation(customisation);
  });
  // The helper is its own process even when we are root: it runs with the V8 flags that keep its
  // memory flat, and the CLI stays responsive to Ctrl-C while the helper does the I/O. When we
  // are not root it is the only part that gets root; the image is still opened, decoded and
  // downloaded as us.
  const job = startHelper({
    source: feed.source,
    job: { kind: 'flash', targets, media: mediaOf(judged), ...feed.start, verify: args.verify, eject: args.eject, ...(args.capacityCheck ? {} : { capacityCheck: false }) },
    ...cliHelperOptions(args.elevate),
    overlays: customisation?.overlays,
    onProgress: (p) => reporter.progress(staged(p, feed.stage())),
  });
  const stopListening = cancelOnSigint(() => job.cancel(), DRIVE_INCOMPLETE);
  const results = await feed.finish(job.result, job);
  stopListening();
  await catalogue?.settle(results);
  reporter.end();
  for (const r of results) reporter.result(r);
  return exitCodeFor(results);
}
