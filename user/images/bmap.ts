import { createHash } from 'node:crypto';
import { jobError, type JobError } from '../../common/domain/failure.js';
import type { MappedRange } from '../../common/contracts/decoder-protocol.js';

/** A block map (bmaptool's .bmap, versions 1.x and 2.x): which blocks of an image hold data. */
export interface BlockMap {
  imageSize: number;
  blockSize: number;
  ranges: MappedRange[];
  digestAlgorithm: 'sha256' | 'sha1';
  mappedBytes: number;
}

/** A bmap is a small XML file; anything this large is not one. */
export const MAX_BMAP_BYTES = 16 * 1024 * 1024;

function bad(name: string, why: string): JobError {
  return jobError('source-corrupt', `The block map ${name} is not valid: ${why}.`);
}

function element(xml: string, tag: string): string | null {
  const match = new RegExp(`<${tag}>\\s*([^<]*?)\\s*</${tag}>`).exec(xml);
  return match?.[1] ?? null;
}

/**
 * Parses a bmap and checks its own checksum (BmapFileChecksum, or BmapFileSHA1 in 1.x: the
 * digest of the file with that value replaced by zeros), so a damaged map is refused before it
 * decides what gets written.
 */
export function parseBmap(xml: string, name: string): BlockMap {
  const version = /<bmap\s+version\s*=\s*"(\d+)\.(\d+)"/.exec(xml);
  if (version === null) throw bad(name, 'no <bmap version="…"> element');
  const major = Number(version[1]);
  if (major < 1 || major > 2) throw bad(name, `version ${version[1]}.${version[2]} is not one Sluice knows (1.x, 2.x)`);
  const imageSize = Number(element(xml, 'ImageSize'));
  const blockSize = Number(element(xml, 'BlockSize'));
  if (!Number.isSafeInteger(imageSize) || imageSize <= 0) throw bad(name, 'no valid <ImageSize>');
  if (!Number.isSafeInteger(blockSize) || blockSize <= 0 || blockSize % 512 !== 0) throw bad(name, 'no valid <BlockSize>');
  const digestAlgorithm = major >= 2 ? (element(xml, 'ChecksumType') ?? 'sha256').toLowerCase() : 'sha1';
  if (digestAlgorithm !== 'sha256' && digestAlgorithm !== 'sha1') throw bad(name, `checksum type ${digestAlgorithm} is not supported`);

  const fileChecksumTag = major >= 2 ? 'BmapFileChecksum' : 'BmapFileSHA1';
  const fileChecksum = element(xml, fileChecksumTag);
  if (fileChecksum !== null) {
    const zeroed = xml.replace(new RegExp(`(<${fileChecksumTag}>\\s*)${fileChecksum}`), `$1${'0'.repeat(fileChecksum.length)}`);
    const actual = createHash(digestAlgorithm).update(zeroed).digest('hex');
    if (actual !== fileChecksum.toLowerCase()) throw bad(name, `its own checksum does not match (the file is damaged or was edited)`);
  }

  const ranges: MappedRange[] = [];
  const attribute = major >= 2 ? 'chksum' : 'sha1';
  const rangePattern = /<Range([^>]*)>\s*(\d+)(?:\s*-\s*(\d+))?\s*<\/Range>/g;
  let end = 0;
  for (const match of xml.matchAll(rangePattern)) {
    const first = Number(match[2]);
    const last = match[3] === undefined ? first : Number(match[3]);
    const digest = new RegExp(`${attribute}\\s*=\\s*"([0-9a-fA-F]+)"`).exec(match[1] ?? '')?.[1] ?? null;
    const offset = first * blockSize;
    const length = Math.min(imageSize, (last + 1) * blockSize) - offset;
    if (last < first || offset < end || length <= 0) throw bad(name, `range ${match[2]}-${match[3] ?? match[2]} is out of order or outside the image`);
    ranges.push({ offset, length, digest });
    end = offset + length;
  }
  const mappedBytes = ranges.reduce((sum, r) => sum + r.length, 0);
  return { imageSize, blockSize, ranges, digestAlgorithm, mappedBytes };
}
