import { Socket } from 'node:net';
import type { ChannelStreams } from './channel.js';
import type { HelperTransport } from './helper-args.js';
import { openHelperFifos } from './helper-fifos.js';
import { connectPipes } from './named-pipes.js';

/** The channel to the app is fd 3 when the helper is its direct child (launch.ts sets up the pair). */
const CONTROL_FD = 3;
/** The image is fd 0 unless the elevation tool cannot pass it (osascript, UAC). */
const IMAGE_FD = 0;

/** What the helper talks and reads through; how they arrived depends on how it was started. */
export interface HelperEndpoints extends ChannelStreams {
  /** The descriptor the image bytes are read from. Opened on demand: a FIFO waits for its writer. */
  image(): Promise<number>;
  /**
   * The descriptor a backup sends the drive's bytes to: fd 0 (the app's pipe), or the image FIFO
   * opened for writing, which waits for the app to open it for reading.
   */
  driveOut(): Promise<number>;
}

export function openHelperEndpoints(transport: HelperTransport): Promise<HelperEndpoints> {
  switch (transport.kind) {
    case 'inherited': {
      const socket = new Socket({ fd: CONTROL_FD, readable: true, writable: true });
      return Promise.resolve({ input: socket, output: socket, image: () => Promise.resolve(IMAGE_FD), driveOut: () => Promise.resolve(IMAGE_FD) });
    }
    case 'fifo':
      return openHelperFifos(transport.dir, transport.imageFifo);
    case 'named-pipe':
      return connectPipes(transport.name);
  }
}
