/**
 * What the app's processes tell each other about images, drives and flash jobs. Types and
 * schemas only: shared by the main process, the preload and the renderer.
 */
import * as v from 'valibot';
import type { ImageFormat } from '../../worker/common/image-format.js';
import type { Progress } from '../../worker/common/progress.js';
import { MAX_TARGETS } from '../../worker/common/protocol.js';
import type { TargetResult } from '../../worker/common/result.js';

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
 * Safety verdicts on a drive, relative to the chosen image. They decide what the drive picker lets
 * a person do; the privileged helper checks the device again on its own before writing.
 */
export const VERDICTS = ['too-small', 'source', 'read-only', 'system', 'large'] as const;
export type Verdict = (typeof VERDICTS)[number];

/**
 * `blocks`: the drive cannot be chosen. `confirm-name`: only after typing the drive's name.
 * `warns`: chosen freely, with a visible warning.
 */
export const VERDICT_EFFECT: Readonly<Record<Verdict, 'blocks' | 'confirm-name' | 'warns'>> = {
  'too-small': 'blocks',
  source: 'blocks',
  'read-only': 'blocks',
  system: 'confirm-name',
  large: 'warns',
};

/** Each verdict in words: a badge for the picker, and the reason, for people and for refusals. */
export const VERDICT_TEXT: Readonly<Record<Verdict, { badge: string; reason: string }>> = {
  'too-small': { badge: 'Too small', reason: 'Smaller than the image.' },
  source: { badge: 'Holds the image', reason: 'The image file is on this drive.' },
  'read-only': { badge: 'Read-only', reason: 'Write-protected: on an SD card, slide the lock switch up.' },
  system: { badge: 'System drive', reason: 'An internal or system disk. Type its name to choose it.' },
  large: { badge: 'Large drive', reason: 'Larger than 128 GB: make sure it is not a backup disk.' },
};

/** A drive as the picker shows it. */
export interface DriveInfo {
  /** The path the helper opens: /dev/sdb, /dev/disk4, \\.\PhysicalDrive2. */
  device: string;
  /** What its owner would call it: "SanDisk Ultra", or a fallback for drives without one. */
  name: string;
  /** Capacity in bytes; null when the OS does not say. */
  size: number | null;
  /** "USB", "SD", "SATA", "NVMe", "loop"...; null when unknown. */
  bus: string | null;
  removable: boolean;
  virtual: boolean;
  readOnly: boolean;
  /** The OS considers it an internal or system disk. */
  system: boolean;
  mountpoints: string[];
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
  /** System drives among the targets that the user confirmed by typing their name. */
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
  /** Things worth saying that do not change the outcome, e.g. a drive that could not be ejected. */
  notes: string[];
}
