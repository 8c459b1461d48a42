/**
 * The helper's side of the Windows transport: it connects, as a client, to the two named pipes
 * the unprivileged app created (user/launcher/pipe-servers.ts). Unit-tested for its names; it
 * cannot run on this Linux machine (see build/HELPER.md).
 */
import { constants } from 'node:fs';
import { createConnection } from 'node:net';
import { pipePaths } from '../common/contracts/helper-transport.js';
import { openFd } from '../node/io.js';
import type { HelperEndpoints } from './endpoints.js';

export function connectPipes(name: string): Promise<HelperEndpoints> {
  const paths = pipePaths(name);
  return new Promise((resolve, reject) => {
    const socket = createConnection(paths.control);
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.off('error', reject);
      // A client handle on the image pipe is a plain file descriptor to the writer's read(2) loop.
      resolve({
        input: socket,
        output: socket,
        image: () => openFd(paths.image, constants.O_RDONLY),
        driveOut: () => Promise.reject(new Error('a backup through named pipes is not supported yet')),
      });
    });
  });
}
