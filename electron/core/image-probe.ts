import { realpath, stat } from 'node:fs/promises';
import type { CatalogueOs } from '../../common/domain/catalogue.js';
import type { Drive } from '../../common/domain/drive.js';
import { jobError } from '../../common/domain/failure.js';
import type { ImageInfo } from '../../common/domain/image.js';
import type { FileIdentity } from '../../user/images/files/open-image.js';
import type { PreparedImage } from '../../user/images/probe/probe.js';
import { prepareImageInChild } from '../../user/images/processes/probe-launch.js';
import { currentPlatform } from '../../writer/platform/index.js';
import { refuseSource } from '../../writer/source-device.js';

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
   * user/images/feed/source-feed.ts), a whole drive the helper opens and reads itself (a clone), or a
   * catalogue entry, prepared again when it is flashed: from the image cache, or downloaded into
   * it (electron/core/app-catalogue.ts).
   */
  source:
    | { kind: 'image'; prepared: PreparedImage }
    | { kind: 'drive'; device: string; medium: string | null }
    | { kind: 'catalogue'; os: CatalogueOs };
}

/** The identity of the file at `path` now. */
export async function fileIdentity(path: string): Promise<FileIdentity> {
  const st = await stat(path);
  return { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
}

/**
 * Probes the image as the current user, in a probe process (user/images/processes/probe-launch.ts: this
 * process parses nothing from an image): its format, size, partitions, block map and checksum,
 * reading only headers and indexes (and, for a compressed image, a short decoder run for its
 * partition table). It is opened once, and nothing is held open afterwards. Throws a JobError
 * (source-not-found, source-read-error, unsupported-format, …) for what cannot be flashed.
 */
export async function probeImage(path: string): Promise<ProbedImage> {
  const prepared = await prepareImageInChild({ image: path, partitions: true });
  const { identity } = prepared;
  return {
    info: prepared.info,
    local: identity === null ? null : { realPath: await realpath(path), identity },
    source: { kind: 'image', prepared },
  };
}

/**
 * Probes an image on the web, in a probe process too: its first bytes name the format (and a raw image's partition table);
 * the size is known when the server says it and the image is not compressed. A checksum file
 * next to it (URL.sha256, SHA256SUMS) is fetched too.
 */
export async function probeImageUrl(url: string): Promise<ProbedImage> {
  const prepared = await prepareImageInChild({ image: url, partitions: true });
  return { info: prepared.info, local: null, source: { kind: 'image', prepared } };
}

/**
 * Whether `drive` may be read whole (copied or backed up), checked as the helper will check it: a
 * whole disk that does not hold the running system. Throws a JobError saying why not. Its
 * filesystems are unmounted by the helper when it opens it.
 */
export async function checkSourceDrive(drive: Drive): Promise<void> {
  const refusal = refuseSource(await (await currentPlatform()).inspect(drive.device));
  if (refusal !== null) throw jobError(refusal.code, refusal.message);
  if (drive.size === null || drive.size === 0)
    throw jobError('source-read-error', `${drive.device} reports no size: is there a card in the reader?`);
}

/** A whole drive as the image to copy (a clone). */
export async function probeSourceDrive(drive: Drive): Promise<ProbedImage> {
  await checkSourceDrive(drive);
  return {
    info: {
      source: drive.device,
      name: `${drive.description || 'Unnamed drive'} (${drive.device})`,
      origin: 'drive',
      format: 'raw',
      sourceSize: drive.size,
      size: drive.size,
      sizeExact: true,
      partitionTable: drive.partitionTable === null ? null : { type: drive.partitionTable, partitions: [] },
      disc: null,
      entry: null,
      blockMap: null,
      checksum: null,
      customisation: null,
      customisationNote: null,
    },
    local: null,
    source: { kind: 'drive', device: drive.device, medium: drive.medium },
  };
}
