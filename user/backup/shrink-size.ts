/** The length a shrunk filesystem gets, whatever its kind. */
import { MiB } from '../../common/domain/units.js';

/** Free room left in a shrunk filesystem: 5% of what it uses, and at least this. */
const MIN_MARGIN = 64 * MiB;
/** Partitions end on whole MiB, as partitioning tools place them. */
export const ALIGN = MiB;

/** A filesystem that needs `used` bytes, with the margin, in whole MiB. */
export function shrunkSize(used: number): number {
  return Math.ceil((used + Math.max(Math.ceil(used * 0.05), MIN_MARGIN)) / ALIGN) * ALIGN;
}
