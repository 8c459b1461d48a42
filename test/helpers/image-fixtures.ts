import type { ImageInfo } from '../../common/contracts/app-models.js';

/** A raw image as the main process describes it, for screens tested without probing a file. */
export function rawImageInfo(path: string, size: number, overrides: Partial<ImageInfo> = {}): ImageInfo {
  const name = path.split(/[\\/]/).pop() ?? path;
  return { path, name, origin: 'file', fileSize: size, format: 'raw', uncompressedSize: size, sizeExact: true, partitionTable: 'gpt', partitions: [], entry: null, blockMap: null, checksumFrom: null, ...overrides };
}
