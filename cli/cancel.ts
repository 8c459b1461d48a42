/**
 * Ctrl-C asks the job to stop at its next block, which then syncs and closes the device. A second
 * Ctrl-C leaves at once, for when the device itself hangs; `leftBehind` says first what that
 * leaves behind ("The drive is incomplete; …"), since no result will.
 */
export function cancelOnSigint(onFirst: () => void, leftBehind: string): () => void {
  let pressed = false;
  const handler = () => {
    if (pressed) {
      process.stderr.write(`\nQuitting at once. ${leftBehind}\n`);
      process.exit(130);
    }
    pressed = true;
    process.stderr.write('\nCancelling… (press Ctrl-C again to quit at once)\n');
    onFirst();
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}
