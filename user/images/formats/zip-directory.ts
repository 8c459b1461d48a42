import { crc32, inflateRawSync } from 'node:zlib';
import { errorText } from '../../../common/domain/error-details.js';
import { jobError, type JobError } from '../../../common/domain/failure.js';
import type { ZipEntryPlan } from '../../../common/contracts/decoder-protocol.js';
import type { ReadAt } from '../../../node/read-at.js';

const EOCD_SIGNATURE = 0x06054b50;
const EOCD_BYTES = 22;
const ZIP64_LOCATOR_SIGNATURE = 0x07064b50;
const ZIP64_EOCD_SIGNATURE = 0x06064b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;
const LOCAL_HEADER_BYTES = 30;
/** The end record may be followed by a comment of up to 64 KiB. */
const MAX_COMMENT = 0xffff;
/** A central directory bigger than this is not a disk image's archive. */
const MAX_DIRECTORY_BYTES = 64 * 1024 * 1024;
const ZIP64_EXTRA = 0x0001;
const FLAG_ENCRYPTED = 0x0001;
const METHOD_STORE = 0;
const METHOD_DEFLATE = 8;

/** Extensions of raw disk images, the entries worth writing. */
export const IMAGE_EXTENSIONS = ['.img', '.iso', '.bin', '.raw', '.wic', '.sdcard', '.hddimg', '.dsk', '.rpi-sdimg'];
/** Where bmaptool-style archives keep the image's block map. */
const BMAP_IN_ZIP = '.meta/image.bmap';

export interface ZipEntry {
  name: string;
  method: number;
  encrypted: boolean;
  crc32: number;
  compressedSize: number;
  uncompressedSize: number;
  localHeaderOffset: number;
}

export interface ZipArchive {
  entries: ZipEntry[];
  /** The entry to write, and why it was chosen when there were others. */
  image: ZipEntry;
  /** Present when several entries were candidates: "chosen as the largest of 2 .img entries". */
  choice: string | null;
  /** A bmap inside the archive (.meta/image.bmap), when present. */
  bmapEntry: ZipEntry | null;
}

function corrupt(why: string): JobError {
  return jobError('source-corrupt', `The zip archive is damaged: ${why}. Is the download complete?`);
}

/** Finds the end of central directory record near the end of the file. */
async function findEndRecord(readAt: ReadAt, fileSize: number): Promise<{ at: number; record: Buffer }> {
  const span = Math.min(fileSize, EOCD_BYTES + MAX_COMMENT);
  const tail = await readAt(fileSize - span, span);
  for (let i = tail.length - EOCD_BYTES; i >= 0; i--) {
    if (tail.readUInt32LE(i) === EOCD_SIGNATURE)
      return { at: fileSize - span + i, record: tail.subarray(i, i + EOCD_BYTES) };
  }
  throw jobError(
    'source-truncated',
    'The zip archive has no central directory at its end: it is truncated (an incomplete download?).',
  );
}

/** Values that do not fit 32 bits are 0xFFFFFFFF in the record and real in the zip64 extra field. */
function applyZip64(extra: Buffer, entry: ZipEntry): void {
  for (let at = 0; at + 4 <= extra.length;) {
    const id = extra.readUInt16LE(at);
    const size = extra.readUInt16LE(at + 2);
    if (id === ZIP64_EXTRA) {
      let field = at + 4;
      const next = (): number => {
        const value = Number(extra.readBigUInt64LE(field));
        field += 8;
        return value;
      };
      if (entry.uncompressedSize === 0xffffffff) entry.uncompressedSize = next();
      if (entry.compressedSize === 0xffffffff) entry.compressedSize = next();
      if (entry.localHeaderOffset === 0xffffffff) entry.localHeaderOffset = next();
      return;
    }
    at += 4 + size;
  }
}

function extensionOf(name: string): string {
  const base = name.slice(name.lastIndexOf('/') + 1).toLowerCase();
  const dot = base.lastIndexOf('.');
  return dot < 0 ? '' : base.slice(dot);
}

/** Reads a zip archive's central directory (zip64 included) and picks the image inside. */
export async function readZipArchive(readAt: ReadAt, fileSize: number, archiveName: string): Promise<ZipArchive> {
  const end = await findEndRecord(readAt, fileSize);
  let count = end.record.readUInt16LE(10);
  let directorySize = end.record.readUInt32LE(12);
  let directoryOffset = end.record.readUInt32LE(16);
  if (end.at >= 20) {
    const locator = await readAt(end.at - 20, 20);
    if (locator.readUInt32LE(0) === ZIP64_LOCATOR_SIGNATURE) {
      const record = await readAt(Number(locator.readBigUInt64LE(8)), 56);
      if (record.readUInt32LE(0) !== ZIP64_EOCD_SIGNATURE) throw corrupt('its zip64 end record is missing');
      count = Number(record.readBigUInt64LE(32));
      directorySize = Number(record.readBigUInt64LE(40));
      directoryOffset = Number(record.readBigUInt64LE(48));
    }
  }
  if (directorySize > MAX_DIRECTORY_BYTES || directoryOffset + directorySize > fileSize)
    throw corrupt('its central directory lies outside the file');
  const directory = await readAt(directoryOffset, directorySize);
  const entries: ZipEntry[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    if (at + 46 > directory.length || directory.readUInt32LE(at) !== CENTRAL_SIGNATURE)
      throw corrupt(`entry ${i + 1} of ${count} in its central directory is unreadable`);
    const nameLength = directory.readUInt16LE(at + 28);
    const extraLength = directory.readUInt16LE(at + 30);
    const commentLength = directory.readUInt16LE(at + 32);
    const entry: ZipEntry = {
      name: directory.toString('utf8', at + 46, at + 46 + nameLength),
      method: directory.readUInt16LE(at + 10),
      encrypted: (directory.readUInt16LE(at + 8) & FLAG_ENCRYPTED) !== 0,
      crc32: directory.readUInt32LE(at + 16),
      compressedSize: directory.readUInt32LE(at + 20),
      uncompressedSize: directory.readUInt32LE(at + 24),
      localHeaderOffset: directory.readUInt32LE(at + 42),
    };
    applyZip64(directory.subarray(at + 46 + nameLength, at + 46 + nameLength + extraLength), entry);
    entries.push(entry);
    at += 46 + nameLength + extraLength + commentLength;
  }
  const files = entries.filter((e) => !e.name.endsWith('/') && !e.name.startsWith('__MACOSX/'));
  const candidates = files.filter((e) => IMAGE_EXTENSIONS.includes(extensionOf(e.name)));
  if (candidates.length === 0) {
    const listing = files
      .slice(0, 5)
      .map((e) => e.name)
      .join(', ');
    throw jobError(
      'source-corrupt',
      `${archiveName} holds no disk image (${IMAGE_EXTENSIONS.join(', ')})${files.length > 0 ? `; it has ${files.length} file${files.length === 1 ? '' : 's'}: ${listing}${files.length > 5 ? ', …' : ''}` : '; it is empty'}.`,
    );
  }
  const image = candidates.reduce((best, e) => (e.uncompressedSize > best.uncompressedSize ? e : best));
  const choice =
    candidates.length > 1
      ? `${image.name}, the largest of ${candidates.length} images in the archive (${candidates.map((e) => e.name).join(', ')})`
      : null;
  if (image.encrypted) {
    throw jobError(
      'unsupported-format',
      `${image.name} in ${archiveName} is encrypted. Sluice does not decrypt zip archives: extract the image with its password first, then flash it.`,
    );
  }
  if (image.method !== METHOD_STORE && image.method !== METHOD_DEFLATE) {
    throw jobError(
      'unsupported-format',
      `${image.name} in ${archiveName} is compressed with zip method ${image.method}; Sluice reads stored and deflated entries. Extract it first, then flash it.`,
    );
  }
  const bmapEntry = files.find((e) => e.name === BMAP_IN_ZIP) ?? null;
  return { entries, image, choice, bmapEntry };
}

/** Where an entry's data starts: after its local header, whose name and extra field may differ from the directory's. */
export async function entryPlan(readAt: ReadAt, entry: ZipEntry): Promise<ZipEntryPlan> {
  const header = await readAt(entry.localHeaderOffset, LOCAL_HEADER_BYTES);
  if (header.length < LOCAL_HEADER_BYTES || header.readUInt32LE(0) !== LOCAL_SIGNATURE)
    throw corrupt(`the local header of ${entry.name} is missing`);
  const dataOffset = entry.localHeaderOffset + LOCAL_HEADER_BYTES + header.readUInt16LE(26) + header.readUInt16LE(28);
  return {
    name: entry.name,
    dataOffset,
    compressedSize: entry.compressedSize,
    uncompressedSize: entry.uncompressedSize,
    method: entry.method,
    crc32: entry.crc32,
  };
}

/**
 * A small entry's contents (a bmap), decoded in memory. The directory's sizes are hard limits:
 * inflating stops at the size it declares (a 3 MiB entry declared as 4 KiB once inflated to
 * 2 GiB, 6.4 GB of memory), and the result must be exactly that size and match its CRC-32.
 */
export async function readSmallEntry(readAt: ReadAt, entry: ZipEntry, limit: number): Promise<Buffer> {
  if (entry.uncompressedSize > limit || entry.compressedSize > limit)
    throw corrupt(`${entry.name} is larger than ${limit} bytes`);
  if (entry.encrypted) throw jobError('unsupported-format', `${entry.name} in the archive is encrypted.`);
  if (entry.method !== METHOD_STORE && entry.method !== METHOD_DEFLATE)
    throw jobError('unsupported-format', `${entry.name} uses zip method ${entry.method}.`);
  const plan = await entryPlan(readAt, entry);
  const data = await readAt(plan.dataOffset, plan.compressedSize);
  if (data.length < plan.compressedSize) throw corrupt(`${entry.name} ends early`);
  let contents = data;
  if (entry.method === METHOD_DEFLATE) {
    try {
      // zlib wants a limit of at least 1; an entry declared empty then fails the size check below.
      contents = inflateRawSync(data, { maxOutputLength: Math.max(1, entry.uncompressedSize) });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
        throw corrupt(
          `${entry.name} inflates to more than the ${entry.uncompressedSize} bytes its directory entry declares`,
        );
      throw corrupt(`${entry.name} does not inflate (${errorText(error)})`);
    }
  }
  if (contents.length !== entry.uncompressedSize)
    throw corrupt(
      `${entry.name} holds ${contents.length} bytes, not the ${entry.uncompressedSize} its directory entry declares`,
    );
  if (crc32(contents) >>> 0 !== entry.crc32) throw corrupt(`${entry.name} does not match its CRC-32`);
  return contents;
}
