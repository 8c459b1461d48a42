/**
 * Ranges of an image or a drive as [offset, length] pairs, and the little arithmetic on sorted
 * lists of them that the block maps, the free-space readers and the writer's layout share.
 */

/** `length` bytes at byte `offset`. */
export type Extent = readonly [offset: number, length: number];

/** `extents` sorted by offset, with those that overlap or touch joined; empty ones dropped. */
export function mergeExtents(extents: readonly Extent[]): Extent[] {
  const sorted = extents.filter(([, length]) => length > 0).sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [offset, length] of sorted) {
    const last = merged[merged.length - 1];
    if (last !== undefined && offset <= last[0] + last[1]) last[1] = Math.max(last[1], offset + length - last[0]);
    else merged.push([offset, length]);
  }
  return merged;
}

/**
 * The parts of `extents` outside every extent of `holes`; both sorted and disjoint (as
 * mergeExtents leaves them). Linear in the two lengths.
 */
export function subtractExtents(extents: readonly Extent[], holes: readonly Extent[]): Extent[] {
  const out: Extent[] = [];
  let h = 0;
  for (const [offset, length] of extents) {
    let start = offset;
    const end = offset + length;
    while (h < holes.length && (holes[h]?.[0] ?? 0) + (holes[h]?.[1] ?? 0) <= start) h++;
    for (let i = h; i < holes.length && start < end; i++) {
      const [holeStart, holeLength] = holes[i] ?? [0, 0];
      if (holeStart >= end) break;
      if (holeStart > start) out.push([start, holeStart - start]);
      start = Math.max(start, holeStart + holeLength);
    }
    if (start < end) out.push([start, end - start]);
  }
  return out;
}

/** The parts of `extents` inside `within` (both sorted and disjoint). */
export function intersectExtents(extents: readonly Extent[], within: readonly Extent[]): Extent[] {
  const out: Extent[] = [];
  let w = 0;
  for (const [offset, length] of extents) {
    const end = offset + length;
    while (w < within.length && (within[w]?.[0] ?? 0) + (within[w]?.[1] ?? 0) <= offset) w++;
    for (let i = w; i < within.length; i++) {
      const [start, span] = within[i] ?? [0, 0];
      if (start >= end) break;
      const from = Math.max(offset, start);
      const to = Math.min(end, start + span);
      if (to > from) out.push([from, to - from]);
    }
  }
  return out;
}

/** Bytes the extents cover. */
export function extentBytes(extents: readonly Extent[]): number {
  return extents.reduce((sum, [, length]) => sum + length, 0);
}
