/**
 * A station whose image goes through a decoder (compressed, downloaded) decodes it once, at
 * arming, into a copy in the image cache, and every card is then written from that copy as from a
 * raw image file: the decoding's CPU is one card's however many cards come, and each card reads
 * the copy at its own pace. The copy is found by the probe like any raw image (its partition table,
 * its filesystems' free space), counts against the cache's limit and reserve, and is removed when
 * the station stops.
 */
import { errorText } from '../../common/domain/error-details.js';
import { JobError } from '../../common/domain/failure.js';
import { closeFd } from '../../node/io.js';
import type { ImageCache } from '../cache/image-cache.js';
import { startDecoder } from '../images/processes/decoder-launch.js';
import { prepareImageInChild } from '../images/processes/probe-launch.js';
import { rm } from 'node:fs/promises';
import type { StationImage } from './station-image.js';

/** The station's image, decoded once where it must be; `dispose` removes the copy. */
export interface DecodedStationImage {
  image: StationImage;
  /** What the station says about it: where the copy is, or why there is none. */
  note: string | null;
  dispose(): Promise<void>;
}

/** Decodes `image` into `cache` when a decoder would otherwise run for every card. */
export async function decodeStationImage(image: StationImage, cache: ImageCache): Promise<DecodedStationImage> {
  const { prepared } = image;
  const none = { image, dispose: () => Promise.resolve() };
  if (prepared.direct) return { ...none, note: null };
  const copy = await cache.decodedCopy(prepared.imageSize ?? 0, true);
  if ('refused' in copy) return { ...none, note: `The image is decoded again for each card: ${copy.refused}.` };
  const path = copy.path ?? '';
  const dispose = () => rm(path, { force: true });
  try {
    await closeFd(copy.read);
    // The whole image, in order: the copy is a raw image, and its own probe finds its free space.
    const plan = { ...prepared.plan, map: null, freeSpace: false, sendImage: true };
    const decoder = await startDecoder(plan, { file: copy.write }).finally(() => closeFd(copy.write));
    const end = await decoder.ended;
    if (end.status === 'failed') throw new JobError(end.failure);
    if (end.status !== 'ok') throw new Error('the decoder stopped');
    const request = { ...image.request, image: path, sha256: undefined, bmap: false as const };
    const decoded = await prepareImageInChild(request);
    return {
      image: { ...image, request, prepared: decoded },
      note: `The image is decoded once, into ${path}, for every card.`,
      dispose,
    };
  } catch (error) {
    await dispose();
    if (error instanceof JobError) throw error;
    throw new Error(`Decoding the image once for the station failed: ${errorText(error)}`);
  }
}
