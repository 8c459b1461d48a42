/**
 * The installer builder's protocol (user/installer/process/main.ts): the parent names the ISO and
 * the drive's size; the builder reads the ISO as the user, lays the stick out and answers with the
 * ranges the helper is to write (the helper checks them again as part of its job), then writes the
 * stick's bytes into the descriptor it was given and says how that ended.
 */
import * as v from 'valibot';
import { FailureSchema } from '../domain/failure.js';
import { ByteCount } from '../domain/wire.js';
import { MAX_EXTENTS } from './helper-protocol.js';

/** Parent → builder: the ISO, and the drive it lays the stick out for. */
export const InstallerRequest = v.strictObject({
  type: v.literal('build'),
  iso: v.pipe(v.string(), v.minLength(1), v.maxLength(4096)),
  driveBytes: ByteCount,
  sectorBytes: v.picklist([512, 1024, 2048, 4096]),
});
export type InstallerRequest = v.InferOutput<typeof InstallerRequest>;

/** Builder → parent: the stick's written ranges first, then how its bytes ended; or why there is no stick. */
export const InstallerMessage = v.variant('type', [
  v.strictObject({
    type: v.literal('plan'),
    extents: v.pipe(v.array(v.tuple([ByteCount, ByteCount])), v.maxLength(MAX_EXTENTS)),
    files: ByteCount,
    fileBytes: ByteCount,
  }),
  v.strictObject({ type: v.literal('end'), bytes: ByteCount }),
  v.strictObject({ type: v.literal('failed'), ...FailureSchema.entries }),
]);
export type InstallerMessage = v.InferOutput<typeof InstallerMessage>;
