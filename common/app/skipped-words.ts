/** The words for what a job left unwritten (or uncompared) and why, for the end screens and the CLI. */
import type { Skipped, SkipReason } from '../domain/skipped.js';
import { formatBytes } from '../domain/units.js';

function why(reason: SkipReason): string {
  if (reason.kind === 'block-map') return `outside the block map ${reason.from}`;
  const where =
    reason.label !== null
      ? `${reason.label} (${reason.filesystem}, partition ${reason.partition})`
      : `partition ${reason.partition} (${reason.filesystem})`;
  return `of free space in ${where}`;
}

/**
 * One sentence per reason ("2.6 GB of free space in rootfs (ext4, partition 2) not written"). The
 * helper's own count (`total`, what it really left out) is the truth: when the reasons do not add
 * up to it (a helper that had to take the image whole), only its count is said.
 */
export function skippedLines(
  total: number | undefined,
  reasons: readonly Skipped[],
  verb: 'written' | 'compared',
): string[] {
  if (total === undefined || total === 0) return [];
  const sum = reasons.reduce((s, r) => s + r.bytes, 0);
  if (sum !== total) return [`${formatBytes(total)} of the image not ${verb}.`];
  return reasons.filter((r) => r.bytes > 0).map((r) => `${formatBytes(r.bytes)} ${why(r.reason)} not ${verb}.`);
}
