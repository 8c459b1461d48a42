import { realpath, stat } from 'node:fs/promises';
import type { Drive } from '../../common/domain/drive.js';
import { currentPlatform } from '../../writer/platform/index.js';
import { refuseSource } from '../../writer/source-device.js';
import { SourceError } from '../../user/images/decode/source-error.js';
import { ImageError, openImage } from '../../user/images/open-image.js';
import { prepareImage, type PreparedImage } from '../../user/images/probe.js';
import type { ApiErrorCode } from '../../common/contracts/api-result.js';
import type { ImageInfo } from '../../common/contracts/app-models.js';

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
  /** A local file's place and identity; null for a download. */
  local: {
    /** The path with symlinks resolved, for finding the drive the image lives on. */
    realPath: string;
    identity: FileIdentity;
  } | null;
  /**
   * How the flash reads it: a prepared image (the file itself, or a decoder: see
   * user/images/source-feed.ts), or a whole drive the helper opens and reads itself (a clone).
   */
  source: { kind: 'image'; prepared: PreparedImage } | { kind: 'drive'; device: string };
}

export class ImageProbeError extends Error {
  constructor(
    readonly code: Extract<ApiErrorCode, 'image-not-found' | 'image-unreadable' | 'image-unsupported' | 'drive-blocked'>,
    message: string,
  ) {
    super(message);
  }
}

/** The identity of the file at `path` now. */
export async function fileIdentity(path: string): Promise<FileIdentity> {
  const st = await stat(path);
  return { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
}

/** Opening first tells a missing file from an unreadable one, which the probe's own errors do not. */
async function checkReadable(path: string): Promise<void> {
  try {
    await (await openImage(path)).close();
  } catch (error) {
    if (error instanceof ImageError) throw new ImageProbeError(error.code === 'not-found' ? 'image-not-found' : 'image-unreadable', error.message);
    throw error;
  }
}

function appInfo(path: string, origin: ImageInfo['origin'], prepared: PreparedImage): ImageInfo {
  const { info } = prepared;
  return {
    path,
    name: info.name,
    origin,
    fileSize: info.sourceSize,
    format: info.format,
    uncompressedSize: info.size,
    sizeExact: info.sizeExact,
    partitionTable: info.partitionTable?.type ?? null,
    partitions: info.partitionTable?.partitions.map(({ label, type, size }) => ({ label, type, size })) ?? [],
    entry: info.entry,
    blockMap: info.blockMap === null ? null : { from: info.blockMap.from, mappedBytes: info.blockMap.mappedBytes },
    checksumFrom: info.checksum?.from ?? null,
  };
}

/**
 * Probes the image as the current user: its format, size, partitions, block map and checksum,
 * reading only headers and indexes (and, for a compressed image, a short decoder run for its
 * partition table). Nothing is held open afterwards.
 */
export async function probeImage(path: string): Promise<ProbedImage> {
  await checkReadable(path);
  const identity = await fileIdentity(path);
  const prepared = await prepare(path);
  return { info: appInfo(path, 'file', prepared), local: { realPath: await realpath(path), identity }, source: { kind: 'image', prepared } };
}

/**
 * Probes an image on the web: its first bytes name the format (and a raw image's partition table);
 * the size is known when the server says it and the image is not compressed. A checksum file
 * next to it (URL.sha256, SHA256SUMS) is fetched too.
 */
export async function probeImageUrl(url: string): Promise<ProbedImage> {
  const prepared = await prepare(url);
  return { info: appInfo(url, 'url', prepared), local: null, source: { kind: 'image', prepared } };
}

async function prepare(image: string): Promise<PreparedImage> {
  try {
    return await prepareImage({ image, partitions: true });
  } catch (error) {
    if (error instanceof SourceError) throw new ImageProbeError(error.code === 'unsupported-format' ? 'image-unsupported' : 'image-unreadable', error.message);
    throw error;
  }
}

/**
 * Whether `drive` may be read whole (copied or backed up), checked as the helper will check it: a
 * whole disk that does not hold the running system. Throws why not. Its filesystems are unmounted
 * by the helper when it opens it.
 */
export async function checkSourceDrive(drive: Drive): Promise<void> {
  const refusal = refuseSource(await (await currentPlatform()).inspect(drive.device));
  if (refusal !== null) throw new ImageProbeError('drive-blocked', refusal.message);
  if (drive.size === null || drive.size === 0) throw new ImageProbeError('image-unreadable', `${drive.device} reports no size: is there a card in the reader?`);
}

/** A whole drive as the image to copy (a clone). */
export async function probeSourceDrive(drive: Drive): Promise<ProbedImage> {
  await checkSourceDrive(drive);
  return {
    info: {
      path: drive.device,
      name: `${drive.description || 'Unnamed drive'} (${drive.device})`,
      origin: 'drive',
      fileSize: drive.size,
      format: 'raw',
      uncompressedSize: drive.size,
      sizeExact: true,
      partitionTable: drive.partitionTable,
      partitions: [],
      entry: null,
      blockMap: null,
      checksumFrom: null,
    },
    local: null,
    source: { kind: 'drive', device: drive.device },
  };
}
