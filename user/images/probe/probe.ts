/**
 * What an image is, before anything is written: its format, exact (or approximate) size, its
 * partition table, whether a block map and a checksum apply, and the decoder's plan. Used by
 * `sluice info`, `sluice flash` and the app's main process (which shows it to the user); it reads
 * only headers, indexes and directories, and the image's first few KiB.
 */
import { readSync } from 'node:fs';
import { basename } from 'node:path';
import { isUrl, type ImageInfo, type PartitionTable } from '../../../common/domain/image.js';
import { readFully } from '../../../node/io.js';
import { MAX_BMAP_BYTES } from '../formats/bmap-size.js';
import { bmapCandidates, parseBmapText, readBmapFile } from '../formats/block-maps.js';
import { expectedChecksum, listsBesideFile } from '../files/checksums.js';
import type { DecodePlan, SourceLocation, ZipEntryPlan } from '../../../common/contracts/decoder-protocol.js';
import { readQcow2 } from '../formats/qcow2.js';
import { MAX_SKIPPED_RANGES } from '../../../common/contracts/helper-protocol.js';
import { freeSpaceOf, type FreeSpace } from '../free-space/find-free-space.js';
import { randomAccess } from '../free-space/image-reader.js';
import { jobError } from '../../../common/domain/failure.js';
import type { DecodedReader } from '../decode/decoded-reader.js';
import type { InitFormat } from '../../../common/domain/catalogue.js';
import type { Customisation, PreparedCustomisation } from '../../../common/domain/customisation.js';
import type { ImageAccess } from '../../customise/detect.js';
import { customisationOf } from '../../customise/prepare.js';
import { classifyDisc } from '../../iso/classify.js';
import { detectFormat, SNIFF_BYTES, type ImageFormat } from '../formats/detect-format.js';
import { openImage, type FileIdentity, type OpenedImage } from '../files/open-image.js';
import {
  filesystemLabel,
  FILESYSTEM_SNIFF_BYTES,
  PARTITION_TABLE_BYTES,
  readPartitionTable,
} from '../formats/partition-table.js';
import type { ReadAt } from '../../../node/read-at.js';
import { readXzIndex } from '../formats/xz-index.js';
import { entryPlan, readSmallEntry, readZipArchive } from '../formats/zip-directory.js';
import { readZstdSize, type ReadAtSync } from '../formats/zstd-size.js';

/** An image ready to flash: what it is, and how to turn it into the helper's input. */
export interface PreparedImage {
  /** A file's or a download's: a drive (a clone) is never probed. */
  info: ImageInfo & { origin: 'file' | 'url' };
  /** The decoder's plan. */
  plan: DecodePlan;
  /**
   * The helper reads the image file itself (a raw image without a block map): no copy through a
   * pipe. A decoder then runs only if a checksum must be checked alongside.
   */
  direct: boolean;
  /** Exact bytes the helper will write (image size, or the block map's image size); null when only the end tells. */
  imageSize: number | null;
  /** Block map extents for the helper's job message; null without a map. */
  extents: [number, number][] | null;
  /**
   * Free space of an image read in place (raw, a stored zip entry), per partition: the feed leaves
   * it out unless asked to write every byte. Null where the decoder looks for it as it streams.
   */
  freeSpace: FreeSpace[] | null;
  /** A local file as it was probed, so a later flash can tell that it changed; null for a download. */
  identity: FileIdentity | null;
  /** What customisation writes onto each card, when settings were given (user/customise/prepare.ts). */
  customisation: PreparedCustomisation | null;
}

export interface ImageRequest {
  /** A path or an http(s) URL. */
  image: string;
  /** --sha256 HEX. */
  sha256?: string | undefined;
  /** --bmap FILE; false ignores a map next to the image. */
  bmap?: string | false | undefined;
  /** Use system decompressors where faster (default true). */
  systemTools?: boolean | undefined;
  /**
   * Read the partition table (default true). A compressed image's needs a short decoder run
   * (about 0.2 s for xz), which a flash can do without. An image read in place (raw, a stored zip
   * entry) always has its table read: a few small reads, and they tell whether it was cut short
   * (common/domain/cut-short.ts).
   */
  partitions?: boolean | undefined;
  /**
   * Look for the image's customisation method (user/customise/detect.ts). Default: for a file,
   * whenever its partition table is read; for a download, only when asked (it downloads the boot
   * partition's metadata, a few MiB).
   */
  detect?: boolean | undefined;
  /** The settings for each card, in target order: plan what customising writes onto each (implies detect). */
  customise?: Customisation[] | undefined;
  /** A catalogue entry's init_format: the method where the image's contents cannot tell (user/customise/detect.ts). */
  initFormat?: InitFormat | null | undefined;
}

/**
 * A decoder run for a compressed image's first bytes. Its module (and the system-tool and pipe
 * code under it) is loaded only for such an image: the probe starts on every flash's critical
 * path, and importing it is a large share of the probe's start.
 */
async function startDecodedReader(plan: DecodePlan): Promise<DecodedReader> {
  return (await import('../decode/decoded-reader.js')).decodedReader(plan);
}

/** Formats whose bytes must be decoded from the start: only a download or a random-access reader can say more. */
const STREAMED: ReadonlySet<ImageFormat> = new Set(['gzip', 'xz', 'bzip2', 'zstd']);

function fileReaderSync(image: OpenedImage): ReadAtSync {
  return (position, length) => {
    const buffer = Buffer.alloc(Math.max(0, Math.min(length, image.fileSize - position)));
    return buffer.subarray(0, readSync(image.fd, buffer, 0, buffer.length, position));
  };
}

function fileReader(image: OpenedImage): ReadAt {
  return async (position, length) => {
    const buffer = Buffer.alloc(Math.max(0, Math.min(length, image.fileSize - position)));
    const got = await readFully(image.fd, buffer, 0, buffer.length, position);
    return buffer.subarray(0, got);
  };
}

/**
 * Deflate turns at most 258 bytes into one code of at least a bit or two: no gzip data decodes to
 * more than about 1032 times its size.
 */
const MAX_DEFLATE_RATIO = 1032;

/**
 * The size a gzip file announces in its last four bytes: the last member's size modulo 4 GiB, so
 * a lower bound of the image's size. A file cut short ends in compressed data instead, read here
 * as a size all the same; one larger than the file could decode to is known not to be a size.
 */
async function gzipSizeHint(readAt: ReadAt, fileSize: number): Promise<number | null> {
  if (fileSize < 18) return null;
  const isize = (await readAt(fileSize - 4, 4)).readUInt32LE(0);
  return isize === 0 || isize > (fileSize - 18) * MAX_DEFLATE_RATIO ? null : isize;
}

/**
 * An image that decodes to nothing is refused before anything starts, as an empty raw file is
 * (open-image.ts): writing it would blank the drive's partition table and report success.
 */
function refuseEmpty(size: number | null, image: string): void {
  if (size === 0)
    throw jobError(
      'source-truncated',
      `${image} holds an empty image: it decodes to 0 bytes. Was the download or the image build interrupted?`,
    );
}

/** Reads partition labels from each partition's first bytes, where the image can be read at any offset. */
async function withFilesystemLabels(table: PartitionTable, readImageAt: ReadAt | null): Promise<PartitionTable> {
  if (readImageAt === null) return table;
  const partitions = await Promise.all(
    table.partitions.map(async (p) =>
      p.label !== null ? p : { ...p, label: filesystemLabel(await readImageAt(p.offset, FILESYSTEM_SNIFF_BYTES)) },
    ),
  );
  return { ...table, partitions };
}

/**
 * The bytes that hold the partition table. Null when a compressed image's decoder cannot give them:
 * a probe reports what it can, and the flash itself names the problem.
 */
async function readHead(access: ImageAccess): Promise<Buffer | null> {
  if (access.random) return access.readAt(0, PARTITION_TABLE_BYTES);
  try {
    const head = await access.readAt(0, PARTITION_TABLE_BYTES);
    return head.length === PARTITION_TABLE_BYTES ? head : null;
  } catch {
    return null;
  }
}

/** bzip2 has no in-process decoder worth the name (pure-JS ones run at 8-18 MB/s): refuse before writing. */
async function requireBzip2(request: ImageRequest): Promise<void> {
  if (
    request.systemTools !== false &&
    (await (await import('../decode/system-tool.js')).systemDecoder('bzip2')) !== null
  )
    return;
  const why =
    request.systemTools === false ? 'Sluice has no bzip2 decoder of its own' : 'neither lbzip2 nor bzip2 is installed';
  throw jobError(
    'unsupported-format',
    `${request.image} is a bzip2 image, and ${why}. Install lbzip2 or bzip2, or decompress the image first.`,
  );
}

type Bmap = Awaited<ReturnType<typeof readBmapFile>>;

/** What an image file's format tells before decoding: its size, a zip's entry, a block map inside it, and whether it reads in place. */
async function readFormat(request: ImageRequest, image: OpenedImage, readAt: ReadAt, named: Bmap) {
  const path = request.image;
  let bmap = named;
  let size: number | null = null;
  let sizeExact = true;
  let zipEntry: ZipEntryPlan | null = null;
  let entry: ImageInfo['entry'] = null;
  /** Reads the decoded image at any offset, where the format allows it without decoding. */
  let readImageAt: ReadAt | null = null;
  switch (image.format) {
    case 'raw':
      size = image.fileSize;
      readImageAt = readAt;
      break;
    case 'xz':
      size = (await readXzIndex(readAt, image.fileSize)).uncompressedSize;
      break;
    case 'zstd':
      size = readZstdSize(fileReaderSync(image), image.fileSize);
      break;
    case 'gzip':
      size = await gzipSizeHint(readAt, image.fileSize);
      sizeExact = false;
      break;
    case 'bzip2':
      await requireBzip2(request);
      break;
    case 'zip': {
      const archive = await readZipArchive(readAt, image.fileSize, basename(path));
      zipEntry = await entryPlan(readAt, archive.image);
      size = archive.image.uncompressedSize;
      entry = { name: archive.image.name, choice: archive.choice };
      if (zipEntry.method === 0) {
        const dataOffset = zipEntry.dataOffset;
        readImageAt = (position, length) => readAt(dataOffset + position, Math.min(length, (size ?? 0) - position));
      }
      if (bmap === null && request.bmap !== false && archive.bmapEntry !== null) {
        const xml = await readSmallEntry(readAt, archive.bmapEntry, MAX_BMAP_BYTES);
        bmap = await parseBmapText(
          xml.toString('utf8'),
          `${basename(path)}:${archive.bmapEntry.name}`,
          `${path}:${archive.bmapEntry.name}`,
        );
      }
      break;
    }
    case 'qcow2': {
      if (bmap !== null)
        throw jobError('unsupported-format', `A block map (--bmap) applies to raw images; ${path} is a qcow2 image.`);
      size = (await readQcow2(readAt, image.fileSize, basename(path))).virtualSize;
      break;
    }
    case 'dmg': {
      // Loaded for dmg images only (its plist parser was 12 ms of CPU in every probe process).
      const { dmgSize, openDmg } = await import('../formats/dmg.js');
      size = await dmgSize(await openDmg(path, image.fileSize, basename(path)));
      break;
    }
  }
  return { size, sizeExact, zipEntry, entry, bmap, readImageAt };
}

/** Probes a local image file. */
async function prepareFile(request: ImageRequest): Promise<PreparedImage> {
  const path = request.image;
  const image = await openImage(path);
  try {
    const readAt = fileReader(image);
    const format = image.format;
    const named =
      request.bmap === false ? null : request.bmap !== undefined ? await readBmapFile(request.bmap, true) : null;
    const facts = await readFormat(request, image, readAt, named);
    const { size, sizeExact, zipEntry, entry, readImageAt } = facts;
    let { bmap } = facts;
    if (bmap === null && request.bmap === undefined && format !== 'qcow2') {
      for (const candidate of bmapCandidates(path)) {
        bmap = await readBmapFile(candidate, false);
        if (bmap !== null) break;
      }
    }
    if (bmap !== null && size !== null && sizeExact && bmap.imageSize !== size) {
      throw jobError(
        'source-corrupt',
        `The block map ${bmap.from} does not match the image: it maps an image of ${bmap.imageSize} bytes, but ${path} holds ${size}.`,
      );
    }
    if (sizeExact) refuseEmpty(size, path);
    const checksum = await expectedChecksum(request.sha256, () => listsBesideFile(path));
    const plan: DecodePlan = {
      location: { kind: 'file', path },
      format,
      imageSize: bmap?.imageSize ?? (sizeExact ? size : null),
      sha256: checksum?.sha256 ?? null,
      sha256From: checksum?.from ?? null,
      map: bmap?.decode ?? null,
      zipEntry,
      sendImage: !(format === 'raw' && bmap === null),
      systemTools: request.systemTools ?? true,
      // An image read in place has its free space found here, before anything is written.
      freeSpace: readImageAt === null,
    };
    const detect = request.customise !== undefined || (request.detect ?? request.partitions !== false);
    const reader =
      readImageAt === null && (detect || request.partitions !== false) ? await startDecodedReader(plan) : null;
    const access: ImageAccess | null =
      readImageAt !== null
        ? { readAt: readImageAt, random: true }
        : reader !== null
          ? { readAt: reader.readAt, random: false }
          : null;
    let partitionTable: PartitionTable | null;
    let custom;
    try {
      const head = access === null ? null : await readHead(access);
      partitionTable = head === null ? null : await withFilesystemLabels(readPartitionTable(head), readImageAt);
      custom = await customisationOf(detect ? access : null, partitionTable, request.customise, request.initFormat);
    } finally {
      await reader?.close();
    }
    const freeSpace =
      readImageAt !== null && size !== null
        ? await freeSpaceOf(randomAccess(readImageAt), size, MAX_SKIPPED_RANGES)
        : null;
    const disc =
      readImageAt !== null && size !== null ? await classifyDisc(readImageAt, size, path, partitionTable) : null;
    return {
      info: {
        source: path,
        name: basename(path),
        origin: 'file',
        format,
        sourceSize: image.fileSize,
        size: bmap?.imageSize ?? size,
        sizeExact: bmap !== null || (size !== null && sizeExact),
        partitionTable,
        disc,
        entry,
        blockMap: bmap === null ? null : { from: bmap.from, mappedBytes: bmap.mappedBytes, ranges: bmap.ranges },
        checksum,
        customisation: custom.support?.method ?? null,
        customisationNote: custom.support?.why ?? null,
      },
      plan,
      direct: !plan.sendImage,
      imageSize: plan.imageSize,
      extents: plan.map?.extents ?? null,
      freeSpace,
      identity: image.identity,
      customisation: custom.prepared,
    };
  } finally {
    await image.close();
  }
}

/**
 * The exact size of an .xz download, from the index at its end, read with range requests (most
 * OS images are .img.xz, and their size decides which cards can take them). Null when the server
 * does not say how long the file is or does not serve ranges, or the index cannot be read: the
 * image is then written all the same, and the decoder judges the file.
 */
async function xzSizeOverHttp(url: string, fileSize: number | null): Promise<number | null> {
  if (fileSize === null) return null;
  const { httpRangeReader } = await import('../http/http-source.js');
  try {
    return (await readXzIndex(httpRangeReader(url), fileSize)).uncompressedSize;
  } catch {
    return null;
  }
}

/** Probes a download: its first bytes say the format; only streamed formats can be written from a URL. */
async function prepareUrl(request: ImageRequest): Promise<PreparedImage> {
  const url = request.image;
  // Loaded for downloads only: node:https and TLS were 27 ms of CPU in every probe process.
  const [{ openHttp }, { listsBesideUrl }] = await Promise.all([
    import('../http/http-source.js'),
    import('../http/url-checksums.js'),
  ]);
  const controller = new AbortController();
  const body = await openHttp(url, { signal: controller.signal });
  let head = Buffer.alloc(0);
  try {
    for await (const chunk of body.stream) {
      head = Buffer.concat([head, chunk as Buffer]);
      if (head.length >= SNIFF_BYTES) break;
    }
  } finally {
    controller.abort();
    body.stream.destroy();
  }
  const format = detectFormat(head, null);
  if (!STREAMED.has(format) && format !== 'raw') {
    throw jobError(
      'unsupported-format',
      `${url} is a ${format} image, which cannot be written while downloading (it must be read out of order). Download it first, then flash the file.`,
    );
  }
  if (request.bmap !== undefined && request.bmap !== false)
    throw jobError('unsupported-format', 'A block map (--bmap) applies to local images only.');
  if (format === 'bzip2') await requireBzip2(request);
  const imageSize =
    format === 'raw' ? body.size : format === 'xz' ? await xzSizeOverHttp(body.finalUrl, body.size) : null;
  refuseEmpty(imageSize, url);
  const checksum = await expectedChecksum(request.sha256, () => listsBesideUrl([body.finalUrl, url]));
  const location: SourceLocation = { kind: 'url', url };
  const plan: DecodePlan = {
    location,
    format,
    imageSize,
    sha256: checksum?.sha256 ?? null,
    sha256From: checksum?.from ?? null,
    map: null,
    zipEntry: null,
    sendImage: true,
    systemTools: request.systemTools ?? true,
    freeSpace: true,
  };
  const name = basename(new URL(body.finalUrl).pathname) || url;
  const detect = request.customise !== undefined || request.detect === true;
  let custom: Awaited<ReturnType<typeof customisationOf>> = { support: null, prepared: null };
  let detectedTable: PartitionTable | null = null;
  if (detect) {
    // A second download of the image's start, stopped once the boot partition has been read.
    const reader: DecodedReader = await startDecodedReader(plan);
    try {
      const access: ImageAccess = { readAt: reader.readAt, random: false };
      const head = await readHead(access);
      detectedTable = head === null ? null : readPartitionTable(head);
      custom = await customisationOf(access, detectedTable, request.customise, request.initFormat);
    } finally {
      await reader.close();
    }
  }
  return {
    info: {
      source: url,
      name,
      origin: 'url',
      format,
      sourceSize: body.size,
      size: plan.imageSize,
      sizeExact: plan.imageSize !== null,
      partitionTable: format === 'raw' && request.partitions !== false ? readPartitionTable(head) : detectedTable,
      disc: null,
      entry: null,
      blockMap: null,
      checksum,
      customisation: custom.support?.method ?? null,
      customisationNote: custom.support?.why ?? null,
    },
    plan,
    direct: false,
    imageSize: plan.imageSize,
    extents: null,
    freeSpace: null,
    identity: null,
    customisation: custom.prepared,
  };
}

/** Probes an image (a path or an http(s) URL) and plans its decoding. Throws a JobError for bad input. */
export function prepareImage(request: ImageRequest): Promise<PreparedImage> {
  return isUrl(request.image) ? prepareUrl(request) : prepareFile(request);
}
