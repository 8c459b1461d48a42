/**
 * A UDF volume's tree (ECMA-167 as UDF 1.02-2.01 uses it: one physical partition, type 1 partition
 * map), the file system of Windows installer ISOs, whose ISO 9660 side holds only a README. Read
 * from the anchor at sector 256, through the volume descriptors to the file set and its root.
 */
import { jobError } from '../../common/domain/failure.js';
import type { ReadAt } from '../../node/read-at.js';
import {
  checkedExtent,
  checkedName,
  MAX_DIRECTORY_BYTES,
  readExactly,
  SECTOR,
  type ByteExtent,
  type DiscEntry,
  type DiscVolume,
} from './volume.js';

const ANCHOR_SECTOR = 256;
const TAG = {
  anchor: 2,
  partition: 5,
  logicalVolume: 6,
  terminating: 8,
  fileSet: 256,
  fileId: 257,
  fileEntry: 261,
  extendedFileEntry: 266,
} as const;
/** Descriptors of a volume descriptor sequence read at most: real ones have 6 to 10. */
const MAX_SEQUENCE = 64;
/** Allocation descriptors of one file read at most: a 5 GiB WIM written in one piece has 5 (each under 1 GiB). */
const MAX_ALLOCATIONS = 4096;

interface UdfFile {
  directory: boolean;
  place: number;
  size: number;
  extents: ByteExtent[];
  inline: Buffer | null;
}

function tagOf(sector: Buffer): number {
  return sector.length >= 16 ? sector.readUInt16LE(0) : -1;
}

/** The partition's start, in bytes, from the anchor and the main volume descriptor sequence. */
async function partitionStart(readAt: ReadAt, image: string): Promise<{ start: number; fileSet: number }> {
  const anchor = await readExactly(readAt, ANCHOR_SECTOR * SECTOR, SECTOR, image);
  if (tagOf(anchor) !== TAG.anchor)
    throw jobError(
      'unsupported-format',
      `${image} has no UDF anchor at sector 256, so its UDF file system cannot be read.`,
    );
  const sequence = await readExactly(
    readAt,
    anchor.readUInt32LE(20) * SECTOR,
    Math.min(anchor.readUInt32LE(16), MAX_SEQUENCE * SECTOR),
    image,
  );
  let start: number | null = null;
  let fileSet: number | null = null;
  for (let at = 0; at + SECTOR <= sequence.length; at += SECTOR) {
    const descriptor = sequence.subarray(at, at + SECTOR);
    const tag = tagOf(descriptor);
    if (tag === TAG.partition) start = descriptor.readUInt32LE(188) * SECTOR;
    if (tag === TAG.logicalVolume) {
      if (descriptor.readUInt32LE(212) !== SECTOR)
        throw jobError(
          'unsupported-format',
          `${image} uses UDF blocks of ${descriptor.readUInt32LE(212)} bytes; Sluice reads optical-disc UDF (2048-byte blocks).`,
        );
      if (descriptor[440] !== 1)
        throw jobError(
          'unsupported-format',
          `${image} uses a UDF 2.5 metadata partition, which Sluice does not read. Windows and Linux installer ISOs use UDF 1.02 to 2.01.`,
        );
      fileSet = descriptor.readUInt32LE(252);
    }
    if (tag === TAG.terminating) break;
  }
  if (start === null || fileSet === null)
    throw jobError(
      'source-corrupt',
      `${image} is damaged: its UDF volume descriptors name no partition or no file set.`,
    );
  return { start, fileSet };
}

/** A file entry's allocation descriptors (short or long), as byte extents in the image. */
function allocations(
  descriptors: Buffer,
  long: boolean,
  start: number,
  imageSize: number,
  image: string,
  name: string,
): ByteExtent[] {
  const step = long ? 16 : 8;
  if (descriptors.length / step > MAX_ALLOCATIONS)
    throw jobError(
      'source-corrupt',
      `${image} is damaged: ${name} claims ${Math.floor(descriptors.length / step)} pieces.`,
    );
  const extents: ByteExtent[] = [];
  for (let at = 0; at + step <= descriptors.length; at += step) {
    const word = descriptors.readUInt32LE(at);
    const length = word & 0x3fffffff;
    if (length === 0) break;
    // Type 3 continues the list elsewhere: Windows ISOs never need it (their files have one extent).
    if (word >>> 30 === 3)
      throw jobError(
        'unsupported-format',
        `${image}: ${name} is in more pieces than one UDF entry lists, which Sluice does not read.`,
      );
    // Types 1 and 2 are not recorded: their bytes read as zeros, whatever the blocks they name hold.
    // No installer disc has such a sparse file, so it is refused rather than copied as data.
    if (word >>> 30 !== 0)
      throw jobError(
        'unsupported-format',
        `${image}: ${name} has pieces the disc does not record (a sparse UDF file), which Sluice does not copy.`,
      );
    extents.push(checkedExtent(start + descriptors.readUInt32LE(at + 4) * SECTOR, length, imageSize, image, name));
  }
  return extents;
}

/** Reads a (extended) file entry at a byte offset: its type, size and where its bytes are. */
async function readFileEntry(
  readAt: ReadAt,
  offset: number,
  start: number,
  imageSize: number,
  image: string,
  name: string,
): Promise<UdfFile> {
  const entry = await readExactly(readAt, offset, SECTOR, image);
  const tag = tagOf(entry);
  if (tag !== TAG.fileEntry && tag !== TAG.extendedFileEntry)
    throw jobError('source-corrupt', `${image} is damaged: ${name}'s UDF file entry at byte ${offset} is not one.`);
  const extended = tag === TAG.extendedFileEntry;
  const size = Number(entry.readBigUInt64LE(56));
  const eaLength = entry.readUInt32LE(extended ? 208 : 168);
  const adLength = entry.readUInt32LE(extended ? 212 : 172);
  const adStart = (extended ? 216 : 176) + eaLength;
  if (adStart + adLength > SECTOR)
    throw jobError('source-corrupt', `${image} is damaged: ${name}'s UDF file entry claims more than its block holds.`);
  const descriptors = entry.subarray(adStart, adStart + adLength);
  const adType = entry.readUInt16LE(34) & 0x07;
  const directory = entry[27] === 4;
  if (adType === 3)
    return { directory, place: offset, size: descriptors.length, extents: [], inline: Buffer.from(descriptors) };
  if (adType > 1)
    throw jobError(
      'unsupported-format',
      `${image}: ${name} uses UDF extended allocation descriptors, which Sluice does not read.`,
    );
  const extents = allocations(descriptors, adType === 1, start, imageSize, image, name);
  const recorded = extents.reduce((sum, [, length]) => sum + length, 0);
  if (!Number.isSafeInteger(size) || size > recorded) {
    throw jobError(
      'source-corrupt',
      `${image} is damaged: ${name} claims ${entry.readBigUInt64LE(56)} bytes, but its pieces hold ${recorded}.`,
    );
  }
  return { directory, place: offset, size, extents: trimmed(extents, size), inline: null };
}

/** Extents cut to a file's size (the last block of an extent is whole, the file may end inside it). */
function trimmed(extents: ByteExtent[], size: number): ByteExtent[] {
  const result: ByteExtent[] = [];
  let left = size;
  for (const [offset, length] of extents) {
    if (left === 0) break;
    result.push([offset, Math.min(length, left)]);
    left -= Math.min(length, left);
  }
  return result;
}

/** A UDF file identifier: compression 8 is one byte a character, 16 is UCS-2 big-endian. */
function identifier(bytes: Buffer): string {
  if (bytes[0] === 16)
    return Buffer.from(bytes.subarray(1, bytes.length - ((bytes.length - 1) % 2)))
      .swap16()
      .toString('utf16le');
  return bytes.toString('latin1', 1);
}

interface FileId {
  name: string;
  icb: number;
}

/** The file identifier descriptors of a directory's bytes, without the parent entry and deleted ones. */
function parseFileIds(bytes: Buffer, image: string, directory: string): FileId[] {
  const ids: FileId[] = [];
  for (let at = 0; at + 38 <= bytes.length;) {
    if (bytes.readUInt16LE(at) !== TAG.fileId)
      throw jobError(
        'source-corrupt',
        `${image} is damaged: the folder ${JSON.stringify(directory)} holds something other than file entries at its byte ${at}.`,
      );
    const characteristics = bytes[at + 18] ?? 0;
    const nameLength = bytes[at + 19] ?? 0;
    const useLength = bytes.readUInt16LE(at + 36);
    const nameAt = at + 38 + useLength;
    if ((characteristics & 0x0c) === 0 && nameLength > 0)
      ids.push({ name: identifier(bytes.subarray(nameAt, nameAt + nameLength)), icb: bytes.readUInt32LE(at + 24) });
    at += Math.ceil((38 + useLength + nameLength) / 4) * 4;
  }
  return ids;
}

/** A UDF volume's tree. */
export async function udfVolume(readAt: ReadAt, imageSize: number, image: string): Promise<DiscVolume> {
  const { start, fileSet } = await partitionStart(readAt, image);
  const fileSetDescriptor = await readExactly(readAt, start + fileSet * SECTOR, SECTOR, image);
  if (tagOf(fileSetDescriptor) !== TAG.fileSet)
    throw jobError('source-corrupt', `${image} is damaged: its UDF file set descriptor is missing.`);
  const entryAt = (block: number): number =>
    checkedExtent(start + block * SECTOR, SECTOR, imageSize, image, 'a UDF file entry')[0];
  const rootFile = await readFileEntry(
    readAt,
    entryAt(fileSetDescriptor.readUInt32LE(404)),
    start,
    imageSize,
    image,
    'the root folder',
  );
  const root: DiscEntry = { name: '', ...rootFile, directory: true };
  return {
    kind: 'udf',
    root,
    async list(directory) {
      if (directory.size > MAX_DIRECTORY_BYTES)
        throw jobError(
          'source-corrupt',
          `${image} has a folder ${JSON.stringify(directory.name)} of ${directory.size} bytes of entries, more than any installer disc holds; Sluice stops reading it.`,
        );
      const bytes =
        directory.inline ??
        Buffer.concat(
          await Promise.all(directory.extents.map(([offset, length]) => readExactly(readAt, offset, length, image))),
        );
      const entries: DiscEntry[] = [];
      for (const id of parseFileIds(bytes, image, directory.name)) {
        const name = checkedName(id.name, image);
        entries.push({ name, ...(await readFileEntry(readAt, entryAt(id.icb), start, imageSize, image, name)) });
      }
      return entries;
    },
  };
}
