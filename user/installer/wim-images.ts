/**
 * The images a WIM holds, from its XML data (uncompressed UTF-16 in every WIM and in the first
 * part of a split one): their count and each one's TOTALBYTES, the figures `wimlib-imagex info`
 * prints as "Image Count" and "Total Bytes". A split WIM's parts hold the same images as the WIM.
 */
import { jobError } from '../../common/domain/failure.js';

const HEADER_BYTES = 208;
/** Windows 11's install.wim has about 30 KB of XML for 11 editions. */
const MAX_XML_BYTES = 4 * 1024 * 1024;

/** "2 images, of 123 and 456 bytes", read through `read` (byte offsets within the WIM). */
export async function wimImages(
  read: (at: number, length: number) => Promise<Buffer>,
  size: number,
  what: string,
): Promise<string> {
  const header = await read(0, HEADER_BYTES);
  const length = header.length < HEADER_BYTES ? 0 : Number(header.readBigUInt64LE(72) & 0x00ffffffffffffffn);
  const offset = header.length < HEADER_BYTES ? 0 : Number(header.readBigUInt64LE(80));
  if (header.toString('latin1', 0, 5) !== 'MSWIM' || length > MAX_XML_BYTES || offset + length > size)
    throw jobError('verify-mismatch', `${what} is not a WIM whose XML data Sluice can read.`);
  const xml = (await read(offset, length)).toString('utf16le');
  const sizes = [...xml.matchAll(/<IMAGE INDEX="\d+">([\s\S]*?)<\/IMAGE>/g)].map(
    (m) => /<TOTALBYTES>(\d+)<\/TOTALBYTES>/.exec(m[1] ?? '')?.[1] ?? '?',
  );
  return `${sizes.length} images, of ${sizes.join(' and ')} bytes`;
}
