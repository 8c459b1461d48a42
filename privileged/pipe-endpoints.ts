/**
 * The helper's side of the Windows transport: it connects, as a client, to the two named pipes
 * the unprivileged app created (user/launcher/pipe-servers.ts). A backup's bytes run through it
 * on Linux too, over Unix sockets (test/user/backup/named-pipe-backup.device.test.ts); a flash's
 * image is opened as a file, which only Windows' pipes allow.
 */
import { constants } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { pipePaths } from '../common/contracts/helper-transport.js';
import { openFd } from '../node/io.js';
import type { HelperEndpoints } from './endpoints.js';

/** A connection to the app's pipe at `path`; its later errors surface through the writes that meet them. */
function connect(path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.off('error', reject);
      socket.on('error', () => undefined);
      resolve(socket);
    });
  });
}

export async function connectPipes(name: string): Promise<HelperEndpoints> {
  const paths = pipePaths(name, process.platform === 'win32');
  const socket = await connect(paths.control);
  return {
    input: socket,
    output: socket,
    // A client handle on the image pipe is a plain file descriptor to the writer's read(2) loop.
    image: () => openFd(paths.image, constants.O_RDONLY),
    // A backup: the drive's bytes go out through the image pipe, as a client of it too.
    driveOut: () => connect(paths.image),
    // No station runs over named pipes: the process that opened the image exits after its job.
    releaseImage: () => Promise.resolve(true),
  };
}
