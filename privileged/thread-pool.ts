/**
 * Sizes libuv's thread pool to the job before anything uses it. Every file-system call of the
 * writer waits on that pool, and Node's default of four threads caps a job at four requests in
 * flight, so sixteen cards would wait on each other's requests. libuv reads
 * UV_THREADPOOL_SIZE once, when the pool starts on its first request, which is why the helper
 * sets it from its own command line (which names every target) before it opens anything.
 */

/**
 * Per target: its write and its read in flight (the pump overlaps them, and a target that left
 * the shared ring reads the image file itself, see writer/stream-ring.ts); then the stream's own
 * read and one to spare. Four at least (libuv's default); libuv allows 1024 at most.
 */
export function threadPoolSize(targets: number): number {
  return Math.min(1024, Math.max(4, 2 * targets + 2));
}

/** Must run before the first file-system call of the process. */
export function sizeThreadPool(targets: number): void {
  process.env.UV_THREADPOOL_SIZE = String(threadPoolSize(targets));
}
