/**
 * What the app's processes tell each other about images, drives and flash jobs. Types and
 * schemas only: shared by the main process, the preload and the renderer.
 */
import * as v from 'valibot';
import type { Drive } from '../../worker/common/drive.js';
import type { ImageFormat } from '../../worker/common/image-format.js';
import type { Progress } from '../../worker/common/progress.js';
import { MAX_TARGETS } from '../../worker/common/protocol.js';
import type { TargetResult } from '../../worker/common/result.js';
import type { Verdict } from '../../worker/common/verdict.js';

export type PartitionTable = 'gpt' | 'mbr' | 'none';

/** An image the user chose, as the main process found it on disk. */
export interface ImageInfo {
  path: string;
  /** The file name, for display. */
  name: string;
  /** Size of the file itself, in bytes. */
  fileSize: number;
  /** Detected from the content, never from the extension. */
  format: ImageFormat;
  /** Whether this build can write the format. */
  supported: boolean;
  /** Bytes the drive will receive; null when that is unknown before decoding. */
  uncompressedSize: number | null;
  /** From the image's first sectors; null when they cannot be read without decoding. */
  partitionTable: PartitionTable | null;
}

/**
 * A drive as the picker shows it: the scanner's Drive (worker/common/drive.ts) and the verdicts
 * on writing the chosen image to it (worker/common/verdict.ts), judged in the main process with
 * the rules the CLI and the helper use. They decide what the picker lets a person do; the
 * privileged helper checks the device again on its own before writing.
 */
export interface DriveInfo extends Drive {
  /** Most serious first; without a chosen image, none about its size or its file. */
  verdicts: Verdict[];
}

const DevicePath = v.pipe(v.string(), v.minLength(1), v.maxLength(256));

/** A local file path, as a dialog or a drop hands it over. */
export const ImagePathSchema = v.pipe(v.string(), v.minLength(1), v.maxLength(4096));

export const FlashRequestSchema = v.strictObject({
  /** The image the renderer shows; refused if it is no longer the one the main process holds. */
  imagePath: ImagePathSchema,
  targets: v.pipe(
    v.array(DevicePath),
    v.minLength(1),
    v.maxLength(MAX_TARGETS),
    v.check((targets) => new Set(targets).size === targets.length, 'each drive may be named once'),
  ),
  /** Internal disks among the targets (verdict `system`, confirm-by-name) whose name the user typed to confirm. */
  confirmedSystemDrives: v.pipe(v.array(DevicePath), v.maxLength(MAX_TARGETS)),
});
export type FlashRequest = v.InferOutput<typeof FlashRequestSchema>;

/** One progress report for one target (see worker/common/progress.ts). */
export type FlashProgress = Progress;

/** How a flash job ended. */
export interface FlashEnd {
  /** One per target, in the order they were requested. */
  results: TargetResult[];
  /** Whether verification was asked for (the setting when the flash started). */
  verify: boolean;
  /** Wall-clock seconds from the start request to the end. */
  seconds: number;
}
