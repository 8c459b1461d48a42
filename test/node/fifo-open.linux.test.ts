/**
 * openFifoUnlessStopped on a real FIFO: a stop releases the waiting open, and the call settles only
 * once its stand-in has stopped too, since root's side closes what the stand-in opens the FIFO
 * through (an O_PATH descriptor) as soon as the call settles.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openFifoUnlessStopped } from '../../node/fifo-open.js';
import { openFd } from '../../node/io.js';
import { threadsInFifoOpen } from '../support/processes.js';

let dir = '';
let fifo = '';

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-fifo-open-'));
  fifo = join(dir, 'image');
  execFileSync('mkfifo', ['-m', '600', fifo]);
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Starts a read-side open of the FIFO with `open`, and resolves once it waits in the kernel. */
async function waitingOpen(
  open: (flags: number) => Promise<number>,
  stop: AbortSignal,
): Promise<{ settled: Promise<number | null> }> {
  const before = threadsInFifoOpen('self');
  const settled = openFifoUnlessStopped(open, 'read', stop);
  await expect.poll(() => threadsInFifoOpen('self'), { interval: 10 }).toBe(before + 1);
  // Wrapped: an async function returning the promise itself would wait for it to settle.
  return { settled };
}

it('a stop releases the waiting open: it settles with null and no thread waits', async () => {
  const stop = new AbortController();
  const { settled } = await waitingOpen((flags) => openFd(fifo, flags), stop.signal);
  stop.abort();
  expect(await settled).toBeNull();
  expect(threadsInFifoOpen('self')).toBe(0);
});

it('settles only once its stand-in has stopped, even when the other end answered first', async () => {
  let standInsUnderWay = 0;
  // The stand-in's open (non-blocking) is slow here, so the app's own end answers the open first.
  const open = async (flags: number): Promise<number> => {
    if ((flags & constants.O_NONBLOCK) === 0) return openFd(fifo, flags);
    standInsUnderWay += 1;
    try {
      await sleep(200);
      return await openFd(fifo, flags);
    } finally {
      standInsUnderWay -= 1;
    }
  };
  const stop = new AbortController();
  const { settled } = await waitingOpen(open, stop.signal);
  stop.abort();
  const app = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
  try {
    expect(await settled).toBeNull();
    expect(standInsUnderWay).toBe(0);
  } finally {
    closeSync(app);
  }
});
