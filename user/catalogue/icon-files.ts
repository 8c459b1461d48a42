/**
 * Catalogue icons as they are kept in the cache: one file per icon address, named by its SHA-256,
 * holding the bytes the server sent if they are an image of a type a page shows safely. Written by
 * the catalogue process (icons.ts), read by the app's main process, which checks them again before
 * the window gets them (electron/core/catalogue-icons.ts).
 */
import { createHash } from 'node:crypto';
import { KiB } from '../../common/domain/units.js';

/** Imager's icons are 40x40 or so: a few KiB. Anything past this is not an icon. */
export const MAX_ICON_BYTES = 256 * KiB;

/** The file an icon address is kept in. */
export function iconFileName(url: string): string {
  return createHash('sha256').update(url).digest('hex');
}

/**
 * The image type `bytes` are, by their signature: PNG, JPEG, GIF or WebP. SVG is not taken: it is
 * a document that can carry scripts and links, not just pixels.
 */
export function iconType(bytes: Buffer): 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp' | null {
  if (bytes.length < 12) return null;
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.subarray(0, 6).toString('latin1') === 'GIF87a' || bytes.subarray(0, 6).toString('latin1') === 'GIF89a')
    return 'image/gif';
  if (bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP')
    return 'image/webp';
  return null;
}
