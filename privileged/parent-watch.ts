import { processExists } from '../node/processes.js';

/**
 * How often an elevated helper checks that the app that asked for it still exists. The channel's
 * end-of-file is the first sign that the app is gone; this catches the case where it never comes
 * (a copy of the app's end of a FIFO kept open by some other process). Two checks a second keep
 * "the parent died → the helper stops" well inside its 2 s bound, for the cost of one kill(pid, 0).
 */
const PARENT_POLL_MS = 500;

/** Calls `gone` once, when process `pid` no longer exists. Returns a function that stops watching. */
export function watchParent(pid: number, gone: () => void): () => void {
  const timer = setInterval(() => {
    if (processExists(pid)) return;
    clearInterval(timer);
    gone();
  }, PARENT_POLL_MS);
  // The watch alone must not keep the helper running.
  timer.unref();
  return () => clearInterval(timer);
}
