/**
 * What `sluice flash` starts while its image is probed, so that the processes' own starts (Node and
 * their modules) overlap the probe
 * instead of following it: the decoder process, where one will likely run, and the helper, where
 * starting it asks nobody anything. The decoder opens no image and the helper no drive until the
 * flash has its plan and its job; a guess that proves wrong costs a process started for nothing,
 * never a different flash.
 */
import { existsSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { isUrl } from '../common/domain/image.js';
import { OS_PREFIX } from '../common/domain/catalogue.js';
import { closeFd, fstatFd, openFd, READ_WITHOUT_WAITING } from '../node/io.js';
import { bmapCandidates } from '../user/images/formats/block-maps.js';
import { WarmDecoder, type DecoderOutput } from '../user/images/processes/decoder-launch.js';
import { invokingUser } from '../user/images/processes/image-child.js';
import { directLaunch } from '../user/launcher/elevation/direct.js';
import { startHelperAhead, type HelperLaunchOptions, type LaunchedHelper } from '../user/launcher/launch.js';
import type { HelperJob } from '../common/contracts/helper-protocol.js';
import type { Progress } from '../common/domain/progress.js';
import type { SourceFeed } from '../user/images/feed/source-feed.js';

/**
 * Names that an image read through a decoder goes by (a download always is). Only a guess about
 * timing, made before the probe reads the file: the format itself is never taken from a name
 * (user/images/formats/detect-format.ts).
 */
const DECODED_NAME = /\.(xz|gz|tgz|zst|zstd|bz2|zip|dmg|qcow2)$/i;

/** What the flash asked for that decides whether a decoder will run. */
export interface AheadRequest {
  image: string;
  /** --bmap FILE, or false for --no-bmap. */
  bmap?: string | false | undefined;
  exact: boolean;
  /** The command writes a file, not drives: it runs no helper, and its decoder writes elsewhere. */
  fileTarget: boolean;
  /** Customisation was asked for: its size is part of the helper's job from its start, so no helper starts early. */
  customising: boolean;
}

/**
 * The decoder process, started now when one will likely run: for a download, a compressed or
 * disk-image name, a raw image under a block map (the decoder sends only the mapped ranges, and
 * checks their digests; only whether a map exists is looked at here, the probe reads it), and
 * under sudo any image (this process is root there and opens no image: the decoder reads even a
 * raw file as the user). None for a catalogue entry, which is found and probed over the network
 * first, or a file target.
 */
export function warmDecoderFor(request: AheadRequest, output: DecoderOutput): WarmDecoder | null {
  return decoderLikely(request) ? new WarmDecoder(output) : null;
}

/** Whether a decoder will likely stream the image (see warmDecoderFor). */
export function decoderLikely(request: AheadRequest): boolean {
  const { image } = request;
  if (request.fileTarget || image.startsWith(OS_PREFIX)) return false;
  const mapped =
    !request.exact &&
    request.bmap !== false &&
    (request.bmap !== undefined || bmapCandidates(image).some((name) => existsSync(name)));
  return isUrl(image) || DECODED_NAME.test(image) || mapped || invokingUser() !== null;
}

/**
 * The image file, for the helper's fd 0, if it is a regular file: opened without waiting (a FIFO
 * with no writer would hang this process, before the probe and its time limit), and never a
 * device. Null where it cannot be: the probe says why, in its own words.
 */
async function openImageFile(path: string): Promise<number | null> {
  const fd = await openFd(path, READ_WITHOUT_WAITING).catch(() => null);
  if (fd === null) return null;
  const regular = await fstatFd(fd).then(
    (st) => st.isFile(),
    () => false,
  );
  if (regular) return fd;
  await closeFd(fd);
  return null;
}

/** The helper started ahead of its job, on the image source it was started with (its fd 0). */
export interface FlashAhead {
  /** The image file opened for it, for the image feed (FeedOptions.opened), which owns it from then on; undefined when the source is the warm decoder's output. */
  handOverFile(): number | undefined;
  /**
   * Settles once the helper holds its own copy of the source (or will never): the image feed may
   * close or stop what it was started with only then.
   */
  readonly spawned: Promise<void>;
  /**
   * Runs `job` on the helper if the image feed reads what it was started with (the file handed
   * over, or the warm decoder the plan ran on); else stops the helper and returns null, and the
   * flash starts its own.
   */
  run(feed: SourceFeed, job: HelperJob, onProgress: (progress: Progress) => void): LaunchedHelper | null;
  /** Stops the helper unless it runs the job, and closes the file unless the feed has it. */
  dispose(): Promise<void>;
}

/**
 * The helper for a flash of `targets`, started now, fed by the warm decoder's output or, with
 * none, by the image file itself (opened here, as the image feed would: this is no sudo, where
 * the decoder reads every file). Only where the helper starts without a prompt (this process is
 * root already): an authorization prompt must come after everything that can refuse the flash.
 * Not with customisation (AheadRequest.customising).
 */
export async function startFlashAhead(
  request: AheadRequest,
  targets: readonly string[],
  warm: WarmDecoder | null,
  options: Omit<HelperLaunchOptions, 'job' | 'source'>,
): Promise<FlashAhead | null> {
  if (
    options.elevation !== directLaunch ||
    request.customising ||
    request.fileTarget ||
    request.image.startsWith(OS_PREFIX)
  )
    return null;
  let file: number | null = null;
  let source: number | Readable | null;
  if (warm !== null) {
    source = await warm.source();
  } else {
    file = invokingUser() === null && !isUrl(request.image) ? await openImageFile(request.image) : null;
    source = file;
  }
  if (source === null) return null;
  // Only its kind and drives count until the flash gives it the job itself (HelperAhead.run).
  const helper = startHelperAhead({
    ...options,
    source,
    job: { kind: 'flash', targets: [...targets], imageSize: null, sourceSeekable: file !== null, verify: true },
  });
  let handedOver = false;
  /** Run or abandoned: the helper's fate is settled, and dispose leaves it alone. */
  let decided = false;
  return {
    handOverFile: () => {
      if (file === null) return undefined;
      handedOver = true;
      return file;
    },
    spawned: helper.spawned,
    run: (feed, job, onProgress) => {
      // What the feed took, as it says itself (a descriptor number closed here may have been reused).
      const same = file !== null ? feed.fromOpened : warm?.taken === true && feed.source === source;
      if (!same) {
        helper.abandon();
        decided = true;
        return null;
      }
      const launched = helper.run(job, onProgress);
      decided = true;
      return launched;
    },
    dispose: async () => {
      if (!decided) helper.abandon();
      decided = true;
      if (file !== null && !handedOver) {
        handedOver = true;
        await closeFd(file);
      }
    },
  };
}
