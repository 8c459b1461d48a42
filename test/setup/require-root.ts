/**
 * Device tests skip without root on a developer's machine. In CI they must run: a green run that
 * skipped them would claim what was never checked.
 */
export default function requireRootInCi(): void {
  if (process.env['CI'] && process.getuid?.() !== 0) {
    throw new Error('CI must run the device tests as root; refusing to skip them.');
  }
}
