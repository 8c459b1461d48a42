/**
 * Apple disk images (UDIF .dmg), through @balena/udif, the library etcher-sdk uses, for the
 * blocks (raw, zero-fill, zlib (UDZO) and ADC (UDCO)) and the data fork's CRC-32. The koly
 * trailer and the property list of block tables are read here (see udif-plist.ts for why).
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { BLOCK, BlockMap, Footer, Image } from '@balena/udif';
import { jobError } from '../../../common/domain/failure.js';
import { errorText } from '../../../common/domain/error-details.js';
import { readFully } from '../../../node/io.js';
import { readBlkx } from './udif-plist.js';

/** Block types @balena/udif cannot decode well: LZFSE it does not know; bzip2 goes through unbzip2-stream, which fails here. */
const UNSUPPORTED_BLOCKS = new Map<number, string>([
  [BLOCK.LZFSE, 'LZFSE (ULFO)'],
  [BLOCK.UDBZ, 'bzip2 (UDBZ)'],
]);

/**
 * A property list larger than this is not a disk image's: each block takes 40 bytes (55 in
 * base64), and hdiutil's 1 MiB chunks make about 3.5 MB of it for a 64 GiB disk.
 */
const MAX_PLIST_BYTES = 16 * 1024 * 1024;

/** A block table ("mish"): its header, then 40 bytes per block, as many as the header's count at byte 200 says. */
const TABLE_HEADER_BYTES = 204;
const TABLE_BLOCK_BYTES = 40;

/**
 * The largest disk a dmg may say it holds: 1 PiB, more than any drive Sluice writes. What the
 * tables claim is not what the file holds (a zero-fill block is 40 bytes for any size), and the
 * sizes pass on to the probe's answer and the helper's job, which take only safe integers.
 */
const MAX_DISK_BYTES = 2 ** 50;

/** `data`'s block table, after checking that it holds the blocks its header counts. */
function blockTable(data: Buffer, name: string): BlockMap {
  const count = data.length >= TABLE_HEADER_BYTES ? data.readUInt32BE(TABLE_HEADER_BYTES - 4) : 0;
  const room = Math.max(0, Math.floor((data.length - TABLE_HEADER_BYTES) / TABLE_BLOCK_BYTES));
  if (data.length < TABLE_HEADER_BYTES || count > room)
    throw new Error(
      `its block table "${name.slice(0, 100)}" claims ${count} blocks but holds ${room} (${data.length} bytes)`,
    );
  return BlockMap.parse(data);
}

/** The disk's size from the block tables, after checking that it is one a drive could hold. */
function claimedDiskBytes(blkx: Image['resourceFork']['blkx']): number {
  let total = 0;
  for (const { map } of blkx) for (const block of map.blocks) total += block.sectorCount * 512;
  if (!(total <= MAX_DISK_BYTES))
    throw new Error(
      `its block tables say the disk inside holds ${total.toPrecision(3)} bytes, more than any drive (1 PiB): the file is damaged or was made to mislead`,
    );
  return total;
}

/** The koly trailer and the blkx tables, read from the file; throws a plain Error saying what is wrong. */
async function readTables(
  path: string,
  fileSize: number,
): Promise<{ footer: Footer; blkx: Image['resourceFork']['blkx'] }> {
  const file = await open(path, 'r');
  try {
    const readAt = async (position: number, length: number): Promise<Buffer> => {
      const buffer = Buffer.alloc(length);
      if ((await readFully(file.fd, buffer, 0, length, position)) < length)
        throw new Error(`it ends before byte ${position + length}`);
      return buffer;
    };
    if (fileSize < Footer.SIZE) throw new Error('it is shorter than its trailer');
    const footer = Footer.parse(await readAt(fileSize - Footer.SIZE, Footer.SIZE));
    if (footer.xmlLength > MAX_PLIST_BYTES || footer.xmlOffset + footer.xmlLength > fileSize)
      throw new Error(
        `its trailer places a property list of ${footer.xmlLength} bytes at byte ${footer.xmlOffset}, outside the file or too large`,
      );
    const entries = readBlkx((await readAt(footer.xmlOffset, footer.xmlLength)).toString('utf8'));
    const blkx = entries.map(({ data, ...entry }) => ({ ...entry, map: blockTable(data, entry.name) }));
    claimedDiskBytes(blkx);
    return { footer, blkx };
  } finally {
    await file.close();
  }
}

/** Opens a dmg for reading; refuses block types that cannot be decoded, before anything is written. */
export async function openDmg(path: string, fileSize: number, name: string): Promise<Image> {
  let tables: Awaited<ReturnType<typeof readTables>>;
  try {
    tables = await readTables(path, fileSize);
  } catch (error) {
    throw jobError('source-corrupt', `${name} is not a readable dmg (UDIF) image: ${errorText(error)}.`);
  }
  // An Image with the tables already read: its constructor would read them again through the
  // shared plist parser. Its block decoding and CRC check use exactly these four fields.
  const image = Object.create(Image.prototype) as Image;
  Object.assign(image, {
    fs: {
      size: fileSize,
      createReadStream: (start = 0, end = Infinity) => Promise.resolve(createReadStream(path, { start, end })),
    },
    footer: tables.footer,
    resourceFork: { blkx: tables.blkx, nsiz: [], cSum: [], plst: [], size: [] },
    ready: Promise.resolve(),
  });
  for (const entry of image.resourceFork.blkx) {
    for (const block of entry.map.blocks) {
      const kind = UNSUPPORTED_BLOCKS.get(block.type);
      if (kind !== undefined) {
        throw jobError(
          'unsupported-format',
          `${name} is a dmg compressed with ${kind}, which Sluice cannot decode. Convert it first: hdiutil convert -format UDZO (on a Mac), or dmg2img.`,
        );
      }
    }
  }
  return image;
}

/** The size of the disk inside the dmg, exactly, from its block tables. */
export function dmgSize(image: Image): Promise<number> {
  return image.getUncompressedSize();
}
