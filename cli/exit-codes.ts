import { type TargetResult } from '../common/domain/result.js';
import { REFUSAL_CODES } from '../common/domain/failure.js';

/** The CLI's exit codes; scripts depend on them, so they never change meaning. */
export const EXIT = {
  ok: 0,
  /** The flash or the verification failed; the device is incomplete. */
  failed: 1,
  usage: 2,
  unsupportedFormat: 3,
  /** A target was refused for safety before anything was written. */
  refused: 4,
  /** Administrator rights were refused or the prompt was cancelled; nothing was written. */
  notAuthorized: 5,
  /** 128 + SIGINT, as shells report a Ctrl-C. */
  cancelled: 130,
} as const;

/** One exit code for a job over several targets: the worst outcome wins. */
export function exitCodeFor(results: readonly TargetResult[]): number {
  if (results.some((r) => r.status === 'cancelled')) return EXIT.cancelled;
  const failures = results.filter((r) => r.status === 'failed');
  if (failures.some((r) => r.code === 'unsupported-format')) return EXIT.unsupportedFormat;
  if (failures.some((r) => r.code === 'elevation-denied')) return EXIT.notAuthorized;
  if (failures.some((r) => !REFUSAL_CODES.has(r.code))) return EXIT.failed;
  if (failures.length > 0) return EXIT.refused;
  return results.length > 0 ? EXIT.ok : EXIT.failed;
}
