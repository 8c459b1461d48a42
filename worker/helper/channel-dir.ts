/**
 * The unprivileged app's side of the FIFO transport, for elevation tools that close every
 * descriptor above 2 (sudo, pkexec) or pass none at all (osascript).
 *
 * The app makes a fresh directory with mode 0700 in its own temporary directory and FIFOs in it
 * (mode 0600), and passes only the directory to the helper, which opens the FIFOs as a client
 * after checking them (helper-fifos.ts). Nothing listens: a FIFO has no accept(), and no other
 * user can even look inside the directory.
 */
import { constants } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { openFd } from '../engine/io.js';
import { runTool } from '../engine/platform/run.js';
import type { ChannelStreams } from './channel.js';
import { FIFO_NAMES } from './fifo-layout.js';
import { copyImage } from './image-feed.js';

/** How often the app looks whether the helper has opened the image FIFO yet. */
const IMAGE_OPEN_POLL_MS = 20;

export interface ChannelDir {
  readonly dir: string;
  readonly streams: ChannelStreams;
  /**
   * Copies the image into the image FIFO once the helper opens it (see copyImage); `stop` ends the
   * wait for a helper that never does. Resolves with the error that kept the image from the helper.
   */
  feedImage(source: number | Readable, stop: AbortSignal): Promise<Error | null>;
  /** Closes the app's ends and deletes the directory. */
  remove(): Promise<void>;
}

/** Opens the write end of a FIFO without blocking a thread: ENXIO means no reader yet, so wait and retry. */
async function openWhenReaderArrives(path: string, stop: AbortSignal): Promise<number | null> {
  while (!stop.aborted) {
    try {
      return await openFd(path, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch (error) {
      if (!(typeof error === 'object' && error !== null && 'code' in error && error.code === 'ENXIO')) throw error;
    }
    await sleep(IMAGE_OPEN_POLL_MS);
  }
  return null;
}

export async function createChannelDir(withImageFifo: boolean): Promise<ChannelDir> {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-helper-'));
  const sockets: Socket[] = [];
  try {
    const names = [FIFO_NAMES.toHelper, FIFO_NAMES.fromHelper, ...(withImageFifo ? [FIFO_NAMES.image] : [])];
    await runTool('mkfifo', ['-m', '600', '--', ...names.map((name) => join(dir, name))]);
    // The app holds both control FIFOs read-write. Opening read-write never blocks (Linux and
    // macOS), so the app never waits on a helper that failed to start; and since the app is the
    // only writer of to-helper, the helper reads end-of-file exactly when the app's process ends.
    // The app itself learns that the helper ended from the launched process's exit, not from here.
    const toHelper = new Socket({ fd: await openFd(join(dir, FIFO_NAMES.toHelper), constants.O_RDWR), readable: false, writable: true });
    sockets.push(toHelper);
    const fromHelper = new Socket({ fd: await openFd(join(dir, FIFO_NAMES.fromHelper), constants.O_RDWR), readable: true, writable: false });
    sockets.push(fromHelper);
    return {
      dir,
      streams: { input: fromHelper, output: toHelper },
      feedImage: async (source, stop) => {
        let fd: number | null;
        try {
          fd = await openWhenReaderArrives(join(dir, FIFO_NAMES.image), stop);
        } catch (error) {
          return error instanceof Error ? error : new Error(String(error));
        }
        return fd === null ? null : copyImage(source, new Socket({ fd, readable: false, writable: true }));
      },
      remove: async () => {
        for (const socket of sockets) socket.destroy();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    for (const socket of sockets) socket.destroy();
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}
