import type { ExpectedChecksum } from '../../../common/domain/image.js';
import { basename, dirname, join } from 'node:path';
import { jobError } from '../../../common/domain/failure.js';
import { readSidecar } from './sidecar-file.js';

/** A SHA-256 the image must have, and where it came from (for the mismatch message). */

const SHA256_HEX = /^[0-9a-fA-F]{64}$/;
/** Checksum files are small; a larger file of that name is not one. */
export const MAX_CHECKSUM_FILE_BYTES = 1024 * 1024;

/**
 * The SHA-256 for `name` in a checksum list: `HEX  name` or `HEX *name` (sha256sum), `SHA256
 * (name) = HEX` (BSD tag), or a lone HEX when the file holds just one.
 */
export function checksumFor(text: string, name: string): string | null {
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  for (const line of lines) {
    const plain = /^([0-9a-fA-F]{64})\s+\*?(.+)$/.exec(line);
    if (plain?.[1] !== undefined && basename(plain[2] ?? '') === name) return plain[1].toLowerCase();
    const tagged = /^SHA256\s*\((.+)\)\s*=\s*([0-9a-fA-F]{64})$/.exec(line);
    if (tagged?.[2] !== undefined && basename(tagged[1] ?? '') === name) return tagged[2].toLowerCase();
  }
  const only = lines.length === 1 ? /^([0-9a-fA-F]{64})$/.exec(lines[0] ?? '') : null;
  return only?.[1]?.toLowerCase() ?? null;
}

/** A checksum list that may sit beside an image: where it is (for the messages), the image's name in it, and its text (null: none there). */
export interface ChecksumList {
  from: string;
  name: string;
  read(): Promise<string | null>;
}

/** IMAGE.sha256, then SHA256SUMS in the image's folder. */
export function listsBesideFile(image: string): ChecksumList[] {
  const name = basename(image);
  return [`${image}.sha256`, join(dirname(image), 'SHA256SUMS')].map((list) => ({
    from: basename(list),
    name,
    read: async () =>
      (await readSidecar(list, MAX_CHECKSUM_FILE_BYTES, `The checksum list ${list}`))?.toString('utf8') ?? null,
  }));
}

/**
 * The checksum to verify the image against: `--sha256 HEX` when given, else the first of the
 * lists `beside` the image (asked for only then) that names it. Null when there is none.
 */
export async function expectedChecksum(
  explicit: string | undefined,
  beside: () => readonly ChecksumList[],
): Promise<ExpectedChecksum | null> {
  if (explicit !== undefined) {
    if (!SHA256_HEX.test(explicit))
      throw jobError('unsupported-format', `--sha256 takes 64 hexadecimal digits, not "${explicit}".`);
    return { sha256: explicit.toLowerCase(), from: '--sha256' };
  }
  for (const list of beside()) {
    const text = await list.read();
    const sha256 = text === null ? null : checksumFor(text, list.name);
    if (sha256 !== null) return { sha256, from: list.from };
  }
  return null;
}
