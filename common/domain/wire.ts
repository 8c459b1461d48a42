/**
 * The bounds of the values that cross a process boundary (the helper's channel, the decoder's, the
 * app's IPC): each schema built from these refuses what no honest peer sends.
 */
import * as v from 'valibot';

/** A drive's path: /dev/sdb, /dev/disk4, \\.\PhysicalDrive2. */
export const DevicePath = v.pipe(v.string(), v.minLength(1), v.maxLength(256));

/** A count of bytes or a byte offset: whole, not negative, exact in a double. */
export const ByteCount = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(Number.MAX_SAFE_INTEGER));

/** A sentence for a person. */
export const Message = v.pipe(v.string(), v.maxLength(4096));
