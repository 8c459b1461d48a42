/**
 * The unprivileged app's side of the FIFO transport, for elevation tools that close every
 * descriptor above 2 (sudo, pkexec) or pass none at all (osascript).
 *
 * The app makes a fresh directory with mode 0700 in its own temporary directory and FIFOs in it
 * (mode 0600), and passes only the directory to the helper, which opens the FIFOs as a client
 * after checking them (privileged/fifo-endpoints.ts). Nothing listens: a FIFO has no accept(), and no other
 * user can even look inside the directory.
 */
import { constants } from 'node:fs';
import { lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorCode } from '../../common/domain/error-details.js';
import { openFd } from '../../node/io.js';
import { openFifoUnlessStopped } from '../../node/fifo-open.js';
import { processExists } from '../../node/processes.js';
import { runTool } from '../../node/run-tool.js';
import type { ChannelStreams } from '../../node/channel.js';
import { FIFO_NAMES } from '../../common/contracts/helper-transport.js';
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
  /**
   * A backup, the other way round: the image FIFO opened for reading once the helper opens it for
   * writing (the drive's bytes arrive there), or null when `stop` (the helper has exited) came first.
   */
  openImageForReading(stop: AbortSignal): Promise<number | null>;
  /** Closes the app's ends and deletes the directory. */
  remove(): Promise<void>;
}

/** Opens the write end of a FIFO without blocking a thread: ENXIO means no reader yet, so wait and retry. */
async function openWhenReaderArrives(path: string, stop: AbortSignal): Promise<number | null> {
  while (!stop.aborted) {
    try {
      return await openFd(path, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch (error) {
      if (errorCode(error) !== 'ENXIO') throw error;
    }
    await sleep(IMAGE_OPEN_POLL_MS);
  }
  return null;
}

/** Channel directories are named after the app process that made them: `sluice-helper-PID-XXXXXX`. */
const CHANNEL_DIR = /^sluice-helper-(\d+)-/;

/**
 * Deletes the channel directories of app processes that no longer exist: one killed outright
 * (kill -9, a crash) could not delete its own. Only this user's own directories are touched.
 */
export async function removeStaleChannelDirs(): Promise<void> {
  const uid = process.getuid?.();
  for (const name of await readdir(tmpdir()).catch(() => [])) {
    const pid = Number(CHANNEL_DIR.exec(name)?.[1] ?? NaN);
    if (!Number.isSafeInteger(pid) || pid === process.pid || processExists(pid)) continue;
    const path = join(tmpdir(), name);
    const st = await lstat(path).catch(() => null);
    if (st === null || !st.isDirectory() || st.uid !== uid) continue;
    await rm(path, { recursive: true, force: true });
  }
}

export async function createChannelDir(withImageFifo: boolean): Promise<ChannelDir> {
  await removeStaleChannelDirs();
  const dir = await mkdtemp(join(tmpdir(), `sluice-helper-${process.pid}-`));
  const sockets: Socket[] = [];
  try {
    const names = [FIFO_NAMES.toHelper, FIFO_NAMES.fromHelper, ...(withImageFifo ? [FIFO_NAMES.image] : [])];
    await runTool('mkfifo', ['-m', '600', '--', ...names.map((name) => join(dir, name))]);
    // The app holds both control FIFOs read-write. Opening read-write never blocks (Linux and
    // macOS), so the app never waits on a helper that failed to start; and since the app is the
    // only writer of to-helper, the helper reads end-of-file exactly when the app's process ends.
    // The app itself learns that the helper ended from the launched process's exit, not from here.
    const toHelper = new Socket({
      fd: await openFd(join(dir, FIFO_NAMES.toHelper), constants.O_RDWR),
      readable: false,
      writable: true,
    });
    sockets.push(toHelper);
    const fromHelper = new Socket({
      fd: await openFd(join(dir, FIFO_NAMES.fromHelper), constants.O_RDWR),
      readable: true,
      writable: false,
    });
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
      openImageForReading: (stop) =>
        openFifoUnlessStopped((flags) => openFd(join(dir, FIFO_NAMES.image), flags), 'read', stop),
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
