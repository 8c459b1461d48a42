import { realpath, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { readFully } from '../../worker/engine/io.js';
import { ImageError, openImage, type OpenedImage } from '../../worker/sources/open-image.js';
import { detectPartitionTable, PARTITION_SNIFF_BYTES } from '../../worker/sources/partition-table.js';
import type { ApiErrorCode } from '../common/api-result.js';
import type { ImageInfo } from '../common/models.js';

/**
 * Formats this build writes. Compressed and disk-image containers are detected and named, and
 * refused until their decoders exist (the image sources issue); raw is handed to the helper as is.
 */
const WRITABLE_FORMATS: ReadonlySet<ImageInfo['format']> = new Set(['raw']);

/** What identifies the file that was probed, so a flash can tell that it changed in between. */
export interface FileIdentity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

/** An image as the main process knows it: what the page sees, plus what only main needs. */
export interface ProbedImage {
  info: ImageInfo;
  /** The path with symlinks resolved, for finding the drive the image lives on. */
  realPath: string;
  identity: FileIdentity;
}

export class ImageProbeError extends Error {
  constructor(
    readonly code: Extract<ApiErrorCode, 'image-not-found' | 'image-unreadable'>,
    message: string,
  ) {
    super(message);
  }
}

/** Opens the image as the current user, names its format and partition table, and closes it. */
export async function probeImage(path: string): Promise<ProbedImage> {
  const image = await openImageForApp(path);
  try {
    const st = await stat(path);
    const supported = WRITABLE_FORMATS.has(image.format);
    let partitionTable: ImageInfo['partitionTable'] = null;
    if (image.format === 'raw') {
      const head = Buffer.alloc(Math.min(PARTITION_SNIFF_BYTES, image.fileSize));
      await readFully(image.fd, head, 0, head.length, 0);
      partitionTable = detectPartitionTable(head);
    }
    return {
      info: {
        path,
        name: basename(path),
        fileSize: image.fileSize,
        format: image.format,
        supported,
        uncompressedSize: image.format === 'raw' ? image.fileSize : null,
        partitionTable,
      },
      realPath: await realpath(path),
      identity: { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs },
    };
  } finally {
    await image.close();
  }
}

/** openImage with its errors turned into the app's codes. */
export async function openImageForApp(path: string): Promise<OpenedImage> {
  try {
    return await openImage(path);
  } catch (error) {
    if (error instanceof ImageError) throw new ImageProbeError(error.code === 'not-found' ? 'image-not-found' : 'image-unreadable', error.message);
    throw error;
  }
}
