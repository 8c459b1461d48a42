import type { ImageFormat } from '../../../common/domain/image-format.js';

export type { ImageFormat };

/** Bytes of the image's start that detection needs. */
export const SNIFF_BYTES = 512;

const MAGICS: readonly { format: ImageFormat; bytes: readonly number[] }[] = [
  { format: 'gzip', bytes: [0x1f, 0x8b] },
  { format: 'xz', bytes: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00] },
  { format: 'bzip2', bytes: [0x42, 0x5a, 0x68] }, // "BZh"
  { format: 'zstd', bytes: [0x28, 0xb5, 0x2f, 0xfd] },
  { format: 'zip', bytes: [0x50, 0x4b, 0x03, 0x04] }, // "PK\3\4"
  { format: 'qcow2', bytes: [0x51, 0x46, 0x49, 0xfb] }, // "QFI\xfb"
];

/** UDIF (dmg) images carry their signature in a 512-byte trailer that starts with "koly". */
const KOLY = [0x6b, 0x6f, 0x6c, 0x79];

function startsWith(bytes: Uint8Array, magic: readonly number[]): boolean {
  return bytes.length >= magic.length && magic.every((b, i) => bytes[i] === b);
}

/**
 * Detects the container format from the first bytes and, for dmg, the last 512 bytes. Anything
 * not recognised is a raw disk image; the extension is never trusted, because downloads are
 * renamed and servers lie about content types.
 */
export function detectFormat(head: Uint8Array, trailer: Uint8Array | null): ImageFormat {
  for (const { format, bytes } of MAGICS) if (startsWith(head, bytes)) return format;
  if (trailer !== null && startsWith(trailer, KOLY)) return 'dmg';
  return 'raw';
}
