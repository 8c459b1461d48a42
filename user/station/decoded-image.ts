/**
 * A station whose image goes through a decoder (compressed, downloaded) decodes it once, at
 * arming, into a copy in the image cache, and every card is then written from that copy as from a
 * raw image file: the decoding's CPU is one card's however many cards come, and each card reads
 * the copy at its own pace. The copy is found by the probe like any raw image (its partition table,
 * its filesystems' free space), and is an entry of the cache like a download, kept by the image
 * file's SHA-256: it counts against the cache's limit and reserve, is removed when the station
 * stops (unless kept on purpose), and outlives a crash, so that the next station of the same image
 * writes from it without decoding again.
 */
import { errorText } from '../../common/domain/error-details.js';
import { JobError } from '../../common/domain/failure.js';
import { closeFd } from '../../node/io.js';
import type { ImageCache } from '../cache/image-cache.js';
import { startDecoder } from '../images/processes/decoder-launch.js';
import { prepareImageInChild } from '../images/processes/probe-launch.js';
import { createHash } from 'node:crypto';
import type { StationImage } from './station-image.js';

/** The station's image, decoded once where it must be; `dispose` removes the copy unless it is kept. */
export interface DecodedStationImage {
  image: StationImage;
  /** What the station says about it: where the copy is, or why there is none. */
  note: string | null;
  dispose(): Promise<void>;
}

/**
 * The cache key of the decoded copy of an image file whose SHA-256 is `sha256`: what the decoder
 * writes depends on nothing else (the whole image, in order), so a copy left by an earlier station
 * of the same file is that image.
 */
export function decodedImageKey(sha256: string): string {
  return createHash('sha256').update(`sluice decoded image ${sha256.toLowerCase()}`).digest('hex');
}

/** Decodes the station's image, in full and in order, into `write` (closed here); throws why it could not. */
async function decode(image: StationImage, write: number): Promise<void> {
  // The whole image, in order: the copy is a raw image, and its own probe finds its free space.
  const plan = { ...image.prepared.plan, map: null, freeSpace: false, sendImage: true };
  const decoder = await startDecoder(plan, { file: write }).finally(() => closeFd(write));
  const end = await decoder.ended;
  if (end.status === 'failed') throw new JobError(end.failure);
  if (end.status !== 'ok') throw new Error('the decoder stopped');
}

/**
 * Decodes `image` into `cache` when a decoder would otherwise run for every card, or takes the
 * copy an earlier station of the same file left there. `keep`: the copy stays in the cache when
 * the station stops, for the next batch (it is then an entry like a download, and goes when the
 * cache needs the room); otherwise it is removed then.
 */
export async function decodeStationImage(
  image: StationImage,
  cache: ImageCache,
  keep = false,
): Promise<DecodedStationImage> {
  const { prepared } = image;
  const none = { image, dispose: () => Promise.resolve() };
  if (prepared.direct) return { ...none, note: null };
  const key = decodedImageKey(image.sha256);
  const dispose = keep ? () => Promise.resolve() : () => cache.remove(key);
  const name = `${image.name}, decoded`;
  const slot = await cache.decodedImage({
    key,
    name,
    url: image.request.image,
    size: prepared.imageSize ?? 0,
    checks: 'image',
  });
  if ('refused' in slot) return { ...none, note: `The image is decoded again for each card: ${slot.refused}.` };
  try {
    let path: string;
    if ('found' in slot) path = slot.found;
    else {
      await decode(image, slot.write);
      path = await slot.complete();
    }
    const request = { ...image.request, image: path, sha256: undefined, bmap: false as const };
    const decoded = await prepareImageInChild(request);
    const how = 'found' in slot ? `was decoded by an earlier station, into ${path}` : `is decoded once, into ${path}`;
    const after = keep ? ' It stays in the image cache when the station stops.' : '';
    return {
      image: { ...image, request, prepared: decoded },
      note: `The image ${how}, for every card.${after}`,
      dispose,
    };
  } catch (error) {
    await cache.remove(key);
    if (error instanceof JobError) throw error;
    throw new Error(`Decoding the image once for the station failed: ${errorText(error)}`);
  }
}
