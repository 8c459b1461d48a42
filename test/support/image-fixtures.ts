import type { ImageInfo } from '../../common/domain/image.js';

/** A raw image as the main process describes it, for screens tested without probing a file. */
export function rawImageInfo(path: string, size: number, overrides: Partial<ImageInfo> = {}): ImageInfo {
  const name = path.split(/[\\/]/).pop() ?? path;
  return {
    source: path,
    name,
    origin: 'file',
    format: 'raw',
    sourceSize: size,
    size,
    sizeExact: true,
    partitionTable: { type: 'gpt', partitions: [] },
    disc: null,
    entry: null,
    blockMap: null,
    checksum: null,
    customisation: null,
    customisationNote: null,
    ...overrides,
  };
}
