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
 * Opens a FIFO for reading or writing with `open` (which passes on the flags it is given), and
 * resolves with its descriptor; or, once `stop` aborts, with null. Stopping stands in for the
 * other end: it opens that end non-blocking and closes it again until the waiting open returns,
 * whose descriptor is then closed, so no thread waits on and no descriptor outlives the stop. A
 * stand-in that fails other than with ENXIO (the FIFO is gone) leaves nothing it could release.
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
    while (!settled) {
      try {
        await closeFd(await open(otherEnd));
      } catch (error) {
        if (errorCode(error) !== 'ENXIO') return;
      }
      await sleep(RELEASE_POLL_MS);
    }
  };
  stop.addEventListener('abort', () => void release(), { once: true });
  try {
    const fd = await open(direction === 'read' ? constants.O_RDONLY : constants.O_WRONLY);
    if (!stop.aborted) return fd;
    await closeFd(fd);
    return null;
  } finally {
    settled = true;
  }
}
