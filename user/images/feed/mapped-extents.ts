import { MAX_EXTENTS } from '../../../common/contracts/helper-protocol.js';
import { EXTENT_ALIGN } from '../../../writer/stream-layout.js';

/**
 * The [offset, length] extents the helper writes for a set of mapped ranges: widened to the
 * helper's alignment, adjacent ones joined, and, when there are more than a job message holds,
 * the closest neighbours merged (writing the image's own bytes in the gap, which is always
 * correct) until they fit. Never narrower than the ranges: nothing mapped is ever left out.
 */
export function mappedExtents(
  ranges: readonly { offset: number; length: number }[],
  imageSize: number,
): [number, number][] {
  const aligned: [number, number][] = [];
  for (const { offset, length } of ranges) {
    if (length <= 0) continue;
    const start = offset - (offset % EXTENT_ALIGN);
    const end = Math.min(imageSize, Math.ceil((offset + length) / EXTENT_ALIGN) * EXTENT_ALIGN);
    const last = aligned[aligned.length - 1];
    if (last !== undefined && start <= last[0] + last[1]) last[1] = Math.max(last[1], end - last[0]);
    else aligned.push([start, end - start]);
  }
  if (aligned.length <= MAX_EXTENTS) return aligned;
  // Merge across the smallest gaps: find the gap size below which merging leaves MAX_EXTENTS.
  const gaps = aligned.slice(1).map((e, i) => e[0] - ((aligned[i]?.[0] ?? 0) + (aligned[i]?.[1] ?? 0)));
  const sorted = [...gaps].sort((a, b) => a - b);
  const threshold = sorted[aligned.length - MAX_EXTENTS - 1] ?? 0;
  let merges = aligned.length - MAX_EXTENTS;
  const merged: [number, number][] = [];
  aligned.forEach((extent, i) => {
    const last = merged[merged.length - 1];
    const gap = i === 0 ? Infinity : (gaps[i - 1] ?? Infinity);
    // Ties at the threshold are merged only while merges are still needed.
    if (last !== undefined && (gap < threshold || (gap === threshold && merges > 0))) {
      merges -= 1;
      last[1] = extent[0] + extent[1] - last[0];
    } else {
      merged.push([extent[0], extent[1]]);
    }
  });
  return merged;
}
