/** Reads `length` bytes at `position` of the source; fewer only at its end. */
export type ReadAt = (position: number, length: number) => Promise<Buffer>;
