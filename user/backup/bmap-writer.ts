/**
 * The block map a backup leaves beside its image (IMAGE.bmap), in bmaptool's format 2.0: which
 * 4 KiB blocks hold what was read from the drive. The rest is free space of a filesystem Sluice
 * read, zero in the image; Sluice (images/formats/bmap.ts) and bmaptool write only the mapped blocks.
 */
import { createHash } from 'node:crypto';
import type { Extent } from '../../common/domain/extents.js';

/** bmaptool's usual block size; the free runs a backup leaves out are whole blocks of it. */
export const BMAP_BLOCK = 4096;

/** The bmap's text for an image of `imageSize` bytes whose `mapped` ranges (sorted, block aligned but at the image's end) hold data. */
export function bmapText(imageSize: number, mapped: readonly Extent[]): string {
  const ranges: string[] = [];
  let blocks = 0;
  for (const [offset, length] of mapped) {
    const first = Math.floor(offset / BMAP_BLOCK);
    const last = Math.ceil((offset + length) / BMAP_BLOCK) - 1;
    blocks += last - first + 1;
    ranges.push(`        <Range> ${first === last ? first : `${first}-${last}`} </Range>`);
  }
  const zeros = '0'.repeat(64);
  const text = [
    '<?xml version="1.0" ?>',
    '<!-- Written by Sluice after a backup: the blocks listed hold what was read from the drive;',
    '     the others are free space of its filesystems, zero in the image. -->',
    '<bmap version="2.0">',
    `    <ImageSize> ${imageSize} </ImageSize>`,
    `    <BlockSize> ${BMAP_BLOCK} </BlockSize>`,
    `    <BlocksCount> ${Math.ceil(imageSize / BMAP_BLOCK)} </BlocksCount>`,
    `    <MappedBlocksCount> ${blocks} </MappedBlocksCount>`,
    '    <ChecksumType> sha256 </ChecksumType>',
    `    <BmapFileChecksum> ${zeros} </BmapFileChecksum>`,
    '    <BlockMap>',
    ...ranges,
    '    </BlockMap>',
    '</bmap>',
    '',
  ].join('\n');
  // bmaptool's own checksum: of the file with this value as zeros.
  return text.replace(zeros, createHash('sha256').update(text).digest('hex'));
}
