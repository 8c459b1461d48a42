import { Socket } from 'node:net';
import type { HelperTransport } from '../node/helper-command-line.js';
import type { HelperEndpoints } from './endpoints.js';
import { openHelperFifos } from './fifo-endpoints.js';
import { connectPipes } from './pipe-endpoints.js';

/** The channel to the app is fd 3 when the helper is its direct child (user/launcher sets up the pair). */
const CONTROL_FD = 3;
/** The image is fd 0 unless the elevation tool cannot pass it (osascript, UAC). */
const IMAGE_FD = 0;

/** Opens the channel the command line names, as a client: the helper never listens. */
export function openHelperEndpoints(transport: HelperTransport): Promise<HelperEndpoints> {
  switch (transport.kind) {
    case 'inherited': {
      const socket = new Socket({ fd: CONTROL_FD, readable: true, writable: true });
      return Promise.resolve({
        input: socket,
        output: socket,
        image: () => Promise.resolve(IMAGE_FD),
        driveOut: () => Promise.resolve(IMAGE_FD),
        // fd 0 is the process's own.
        releaseImage: () => Promise.resolve(true),
      });
    }
    case 'fifo':
      return openHelperFifos(transport.dir, transport.imageFifo);
    case 'named-pipe':
      return connectPipes(transport.name);
  }
}
