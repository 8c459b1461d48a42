/**
 * The app's side of the Windows transport. UAC starts the helper through ShellExecute, which
 * passes no descriptors at all, so the unprivileged app creates two named pipes (control, and
 * image bytes) under a name with 128 random bits, and the helper connects to them as a client
 * (privileged/pipe-endpoints.ts): the helper never listens.
 *
 * Each pipe server takes its first connection and stops listening. Only the app's own user and
 * administrators can write to a pipe with the default security descriptor; another user can at
 * most connect read-only first, which makes the job fail to start (the app waits for `ready`
 * from the helper, which such a client cannot send), never makes it lie. Off Windows the same
 * code serves Unix sockets in a 0700 directory (helper-transport.ts pipePaths), so backups
 * through it run in the Linux tests (test/user/backup/named-pipe-backup.device.test.ts).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Socket } from 'node:net';
import { mkdirSync, rmSync } from 'node:fs';
import { pipeDir, pipePaths } from '../../common/contracts/helper-transport.js';
import type { ChannelStreams } from '../../node/channel.js';

export function newPipeName(): string {
  return `sluice-${randomBytes(16).toString('hex')}`;
}

/**
 * A pipe server at `path` for exactly one client: it stops listening once that client connects.
 * `client` is null when the server could not listen or was closed first; the job then ends with
 * the launched process, which the app watches anyway.
 */
function acceptOne(path: string): { client: Promise<Socket | null>; close(): void } {
  const server = createServer();
  const client = new Promise<Socket | null>((resolve) => {
    server.once('connection', (socket) => {
      server.close();
      resolve(socket);
    });
    server.once('error', () => resolve(null));
    server.once('close', () => resolve(null));
  });
  server.listen(path);
  return { client, close: () => server.close() };
}

export interface PipeServers {
  control: Promise<ChannelStreams | null>;
  image: Promise<Socket | null> | null;
  close(): void;
}

/**
 * The pipes the helper will connect to. Off Windows their directory is made first, 0700 and new
 * (mkdir fails on one that exists, whoever made it): only this user and root can reach them. A
 * socket's own mode follows the umask, so without it any user could connect before the helper
 * and send the app a result of its choosing.
 */
export function createPipeServers(name: string, withImage: boolean): PipeServers {
  const windows = process.platform === 'win32';
  if (!windows) mkdirSync(pipeDir(name), { mode: 0o700 });
  const paths = pipePaths(name, windows);
  const control = acceptOne(paths.control);
  const image = withImage ? acceptOne(paths.image) : null;
  return {
    control: control.client.then((socket) => (socket === null ? null : { input: socket, output: socket })),
    image: image?.client ?? null,
    close: () => {
      control.close();
      image?.close();
      if (!windows) rmSync(pipeDir(name), { recursive: true, force: true });
    },
  };
}
