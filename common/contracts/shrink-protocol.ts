/**
 * The shrinker's protocol (user/backup/shrink-process/main.ts): the parent asks it to shrink a raw
 * backup it saved; the shrinker answers once, with what it did or why it did not, and exits. The
 * file holds a drive's filesystems, which anyone who had the card may have shaped, so the answer is
 * checked here before the backup uses it.
 */
import * as v from 'valibot';
import { FailureSchema } from '../domain/failure.js';
import { ByteCount } from '../domain/wire.js';

/** Parent → shrinker: shrink the raw backup `file`, `length` bytes long. */
export const ShrinkRequest = v.strictObject({
  type: v.literal('shrink'),
  file: v.pipe(v.string(), v.minLength(1)),
  length: ByteCount,
});
export type ShrinkRequest = v.InferOutput<typeof ShrinkRequest>;

/**
 * Shrinker → parent: the file's length before and after, and what reading it back found (null: as
 * it should be); `small` when its last filesystem is about as small as it holds already; or why not.
 */
export const ShrinkReply = v.variant('type', [
  v.strictObject({ type: v.literal('shrunk'), before: ByteCount, after: ByteCount, fault: v.nullable(v.string()) }),
  v.strictObject({ type: v.literal('small') }),
  v.strictObject({ type: v.literal('failed'), ...FailureSchema.entries }),
]);
export type ShrinkReply = v.InferOutput<typeof ShrinkReply>;
