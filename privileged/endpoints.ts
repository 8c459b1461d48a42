import type { Writable } from 'node:stream';
import type { ChannelStreams } from '../node/channel.js';

/** What the helper talks and reads through; how they arrived depends on how it was started (open-endpoints.ts). */
export interface HelperEndpoints extends ChannelStreams {
  /** The descriptor the image bytes are read from. Opened on demand: a FIFO waits for its writer. */
  image(): Promise<number>;
  /**
   * Where a backup sends the drive's bytes: fd 0 (the app's pipe), the image FIFO opened for
   * writing (which waits for the app to open it for reading), or the image named pipe.
   */
  driveOut(): Promise<number | Writable>;
  /**
   * Closes the descriptors image() and driveOut() opened, and calls off an open still waiting for
   * the app, whose promise then rejects. A helper process exits after its job, which does all that;
   * an armed station's process goes on to the next card, so it calls this at each job's end.
   * Resolves with false when an open has not returned within RELEASE_WAIT_MS (node/fifo-open.ts):
   * its thread of the pool stays blocked in it.
   */
  releaseImage(): Promise<boolean>;
}
