/**
 * The capacity check of every flash writes one marker block at each of these places past the
 * image (writer/capacity-markers.ts): tests that prove nothing else past the image changed leave
 * exactly these blocks out of the comparison.
 */
import { markerPositions } from '../../writer/capacity-markers.js';

/**
 * A copy of `bytes`, the device's bytes from offset `start` on, with the blocks the capacity
 * check writes on a drive of `capacity` bytes past an image of `imageEnd` bytes blanked out.
 */
export function withoutMarkers(
  bytes: Buffer,
  start: number,
  capacity: number,
  imageEnd: number,
  blockSize = 512,
): Buffer {
  const copy = Buffer.from(bytes);
  for (const position of markerPositions(imageEnd, capacity, blockSize)) {
    const at = position - start;
    if (at + blockSize > 0 && at < copy.length) copy.fill(0, Math.max(0, at), Math.min(copy.length, at + blockSize));
  }
  return copy;
}
