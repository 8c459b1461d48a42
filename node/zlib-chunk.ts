import { MiB } from '../common/domain/units.js';

/**
 * The chunk node:zlib's codecs produce, and the reads that feed them. zlib's default is 16 KiB,
 * whose per-chunk overhead dominates: with it, decoding an image and a backup's zstd both take
 * several times as long as with 1 MiB.
 */
export const ZLIB_CHUNK = 1 * MiB;
