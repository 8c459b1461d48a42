/**
 * Apple disk images (UDIF .dmg), through @balena/udif, the library etcher-sdk uses: the koly
 * trailer, the property list of block tables, and the blocks (raw, zero-fill, zlib (UDZO) and ADC
 * (UDCO)).
 */
import { createReadStream } from 'node:fs';
import { BLOCK, Image } from '@balena/udif';
import { jobError } from '../../common/domain/failure.js';
import { errorText } from '../../common/domain/error-details.js';

/** Block types @balena/udif cannot decode well: LZFSE it does not know; bzip2 goes through unbzip2-stream, which fails here. */
const UNSUPPORTED_BLOCKS = new Map<number, string>([
  [BLOCK.LZFSE, 'LZFSE (ULFO)'],
  [BLOCK.UDBZ, 'bzip2 (UDBZ)'],
]);

/** Opens a dmg for reading; refuses block types that cannot be decoded, before anything is written. */
export async function openDmg(path: string, fileSize: number, name: string): Promise<Image> {
  const image = new Image({
    size: fileSize,
    createReadStream: (start = 0, end = Infinity) => Promise.resolve(createReadStream(path, { start, end })),
  });
  try {
    await image.ready;
  } catch (error) {
    throw jobError('source-corrupt', `${name} is not a readable dmg (UDIF) image: ${errorText(error)}.`);
  }
  for (const entry of image.resourceFork.blkx) {
    for (const block of entry.map.blocks) {
      const kind = UNSUPPORTED_BLOCKS.get(block.type);
      if (kind !== undefined) {
        throw jobError('unsupported-format', `${name} is a dmg compressed with ${kind}, which Sluice cannot decode. Convert it first: hdiutil convert -format UDZO (on a Mac), or dmg2img.`);
      }
    }
  }
  return image;
}

/** The size of the disk inside the dmg, exactly, from its block tables. */
export function dmgSize(image: Image): Promise<number> {
  return image.getUncompressedSize();
}
