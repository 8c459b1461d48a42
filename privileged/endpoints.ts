import type { ChannelStreams } from '../node/channel.js';

/** What the helper talks and reads through; how they arrived depends on how it was started (open-endpoints.ts). */
export interface HelperEndpoints extends ChannelStreams {
  /** The descriptor the image bytes are read from. Opened on demand: a FIFO waits for its writer. */
  image(): Promise<number>;
  /**
   * The descriptor a backup sends the drive's bytes to: fd 0 (the app's pipe), or the image FIFO
   * opened for writing, which waits for the app to open it for reading.
   */
  driveOut(): Promise<number>;
}
