/**
 * A blocking open of a FIFO that can be called off. Opening one end of a FIFO blocks a thread of
 * libuv's pool until a process opens the other end; when that process never does (it failed or
 * went away first), the thread would wait forever and a late open would leave its descriptor
 * behind. Both sides of the helper's image FIFO use this.
 */
import { constants } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorCode } from '../common/domain/error-details.js';
import { closeFd } from './io.js';

/** How often the other end is tried again while the blocked open is not yet waiting in the kernel (ENXIO). */
const RELEASE_POLL_MS = 20;

/**
 * How long a stop tries to release the blocked open, and how long its caller waits for the open to
 * return. The stand-in reaches the FIFO the way `open` does. Where that is by its name (the app's
 * side; root's side off Linux), a FIFO removed or replaced meanwhile leaves the inode the open
 * waits on out of reach, so its thread stays blocked and the caller goes on without it; root's
 * side on Linux reaches it through a descriptor it holds (fifo-endpoints.ts, fifoInode). A release
 * that can work takes about one RELEASE_POLL_MS.
 */
export const RELEASE_WAIT_MS = 3000;

/**
 * Opens a FIFO for reading or writing with `open` (which passes on the flags it is given), and
 * resolves with its descriptor; or, once `stop` aborts, with null. Stopping stands in for the
 * other end: it opens that end non-blocking with `open` and closes it again until the waiting open
 * returns, whose descriptor is then closed, so no thread waits on and no descriptor outlives the
 * stop. A stand-in that fails other than with ENXIO (the FIFO is gone), or that has not released
 * the open within RELEASE_WAIT_MS (the FIFO was replaced), leaves nothing it could release; a
 * descriptor the open returns later is still closed. It settles only once the stand-in has
 * stopped, so that the caller may then close whatever `open` reaches the FIFO through.
 */
export async function openFifoUnlessStopped(
  open: (flags: number) => Promise<number>,
  direction: 'read' | 'write',
  stop: AbortSignal,
): Promise<number | null> {
  if (stop.aborted) return null;
  let settled = false;
  const otherEnd = (direction === 'read' ? constants.O_WRONLY : constants.O_RDONLY) | constants.O_NONBLOCK;
  const release = async (): Promise<void> => {
    const giveUp = Date.now() + RELEASE_WAIT_MS;
    while (!settled && Date.now() < giveUp) {
      try {
        await closeFd(await open(otherEnd));
      } catch (error) {
        if (errorCode(error) !== 'ENXIO') return;
      }
      await sleep(RELEASE_POLL_MS);
    }
  };
  let releasing: Promise<void> | null = null;
  stop.addEventListener('abort', () => (releasing = release()), { once: true });
  try {
    const fd = await open(direction === 'read' ? constants.O_RDONLY : constants.O_WRONLY);
    if (!stop.aborted) return fd;
    await closeFd(fd);
    return null;
  } finally {
    settled = true;
    // Settled only once the stand-in has stopped too: the caller may then close what `open` reaches the FIFO through.
    await releasing;
  }
}
