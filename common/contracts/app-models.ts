/**
 * What the app's processes tell each other about images, drives and flash jobs. Types and
 * schemas only: shared by the main process, the preload and the renderer.
 */
import * as v from 'valibot';
import { BACKUP_COMPRESSIONS } from '../domain/backup-compression.js';
import { ProfileSchema } from '../domain/customisation.js';
import type { Drive } from '../domain/drive.js';
import { MediaSchema, MediumSchema } from './helper-protocol.js';
import type { JobKind } from '../domain/job.js';
import { MAX_TARGETS } from './helper-protocol.js';
import type { TargetResult } from '../domain/result.js';
import type { Verdict } from '../domain/verdict.js';

/**
 * A drive as the picker shows it: the scanner's Drive (common/domain/drive.ts) and the verdicts
 * on writing the chosen image to it (common/domain/verdict.ts), judged in the main process with
 * the rules the CLI and the helper use. They decide what the picker lets a person do; the
 * privileged helper checks the device again on its own before writing.
 */
export interface DriveInfo extends Drive {
  /** Most serious first; without a chosen image, none about its size or its file. */
  verdicts: Verdict[];
}

/** A drive's device path, as the drive list names it. */
export const DevicePathSchema = v.pipe(v.string(), v.minLength(1), v.maxLength(256));

/** A local file path, as a dialog or a drop hands it over (or, for a flash, the chosen image's URL). */
export const ImagePathSchema = v.pipe(v.string(), v.minLength(1), v.maxLength(4096));

/** An image's web address, typed by the user: http or https only, never file: or others. */
export const ImageUrlSchema = v.pipe(
  v.string(),
  v.maxLength(4096),
  v.url('That is not a web address.'),
  v.check((url) => /^https?:\/\//i.test(url), 'Only http:// and https:// addresses can be downloaded.'),
);

export const FlashRequestSchema = v.strictObject({
  /** The image the renderer shows (its ImageInfo.source); refused if it is no longer the one the main process holds. */
  image: ImagePathSchema,
  targets: v.pipe(
    v.array(DevicePathSchema),
    v.minLength(1),
    v.maxLength(MAX_TARGETS),
    v.check((targets) => new Set(targets).size === targets.length, 'each drive may be named once'),
  ),
  /** Per target, the medium the user saw in it (Drive.medium): refused if the drive holds another now. */
  media: v.optional(MediaSchema),
  /** Customise each card: card i gets the profile's card number nextCard + i. */
  customise: v.optional(v.nullable(ProfileSchema)),
  /** An ISO: 'files' makes an installer stick of its files (one drive), 'image' (the default) writes it as it is. */
  isoMode: v.optional(v.picklist(['files', 'image'])),
});
export type FlashRequest = v.InferOutput<typeof FlashRequestSchema>;

/**
 * What a person typed to confirm an internal disk (verdict `system`, confirm-by-name), for the
 * medium they saw in it: the core compares it with the drive it listed and keeps the confirmation
 * (electron/core/drive-confirmations.ts). A start naming an internal disk it did not confirm is refused.
 */
export const DriveConfirmationSchema = v.strictObject({
  device: DevicePathSchema,
  medium: MediumSchema,
  typed: v.pipe(v.string(), v.maxLength(256)),
});
export type DriveConfirmation = v.InferOutput<typeof DriveConfirmationSchema>;

/** How a drive is saved: compressed by one of these, or raw (null). */
export const BackupCompressionSchema = v.nullable(v.picklist(BACKUP_COMPRESSIONS));

export const BackupRequestSchema = v.strictObject({
  /** The drive to read. */
  device: DevicePathSchema,
  /** The file the save dialog returned; refused if it is not the one the main process holds for this drive. */
  file: ImagePathSchema,
  compress: BackupCompressionSchema,
  /** Stop after the end of the last partition instead of reading the whole drive. */
  trimToPartitions: v.boolean(),
  /** Shrink an uncompressed backup's last ext2/3/4 filesystem to what it holds (`sluice backup --shrink`). */
  shrink: v.optional(v.boolean()),
});
export type BackupRequest = v.InferOutput<typeof BackupRequestSchema>;

/**
 * What the app runs: the helper's kinds of job, and an erase, which the helper runs as a flash of
 * the tables user/erase makes but which the app's screens and notifications name as what it is.
 */
export type AppJobKind = JobKind | 'erase';

export const EraseRequestSchema = v.strictObject({
  device: DevicePathSchema,
  /** The medium the user saw in the drive (Drive.medium): refused if the drive holds another now. */
  medium: MediumSchema,
  /** The new volume's label; null for none. The filesystem says what it can store (user/erase/label.ts). */
  label: v.nullable(v.pipe(v.string(), v.maxLength(64))),
});
export type EraseRequest = v.InferOutput<typeof EraseRequestSchema>;

/** How a job ended: a flash or a clone (one result per drive), or a backup (whose one result is the file's, or the drive's when it was refused). */
export interface JobEnd {
  kind: AppJobKind;
  /** One per target, in the order they were requested. */
  results: TargetResult[];
  /** Whether verification was asked for (the setting when the flash started). */
  verify: boolean;
  /** Wall-clock seconds from the start request to the end. */
  seconds: number;
}
