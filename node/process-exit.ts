/**
 * Ending a process while a system call may be stuck on libuv's thread pool. Node joins the pool's
 * threads on its way out, so process.exit() waits for every call in flight: measured here (Node
 * 24), a read(2) of a pipe whose writer had stopped kept process.exit() (and process.reallyExit(),
 * and a worker's readSync) from returning for as long as the writer kept it open. A call that may
 * never return is registered with mayNeverReturn; while one is pending, exitProcess ends the
 * process with SIGKILL, which nothing holds up (the exit status is then the signal's: whoever
 * still listens has had the last message by then).
 */
let pending = 0;

/** Registers `call` (a read of a source that stalls, an open of a FIFO nobody opens) until it settles. */
export function mayNeverReturn(call: Promise<unknown>): void {
  pending += 1;
  const settled = () => {
    pending -= 1;
  };
  call.then(settled, settled);
}

/** process.exit(code), unless a registered call is still stuck: then SIGKILL. */
export function exitProcess(code: number): never {
  if (pending > 0) process.kill(process.pid, 'SIGKILL');
  process.exit(code);
}
