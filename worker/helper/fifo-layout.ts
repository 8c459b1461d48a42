/**
 * The FIFOs in a channel directory, shared by the side that makes them (channel-dir.ts, the
 * unprivileged app) and the side that opens them (helper-fifos.ts, the helper). The helper
 * takes only the directory from its command line; these names are fixed.
 */
export const FIFO_NAMES = {
  /** App → helper: start and cancel messages. */
  toHelper: 'to-helper',
  /** Helper → app: ready, progress, log, result. */
  fromHelper: 'from-helper',
  /** App → helper: the image bytes, when the elevation tool cannot pass a descriptor. */
  image: 'image',
} as const;
