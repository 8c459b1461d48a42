import { createHash } from 'node:crypto';
import { jobError, type JobError } from '../../../common/domain/failure.js';
import type { MappedRange } from '../../../common/contracts/decoder-protocol.js';
import { parseXml, XmlError } from './xml.js';
import { MAX_BMAP_BYTES } from './bmap-size.js';

/** A block map (bmaptool's .bmap, versions 1.x and 2.x): which blocks of an image hold data. */
export interface BlockMap {
  imageSize: number;
  blockSize: number;
  ranges: MappedRange[];
  digestAlgorithm: 'sha256' | 'sha1';
  mappedBytes: number;
}

/**
 * What a bmap may hold: three elements and attributes per range (<Range>, </Range>, chksum=), so
 * about 43,000 ranges (4.6 MB), which parse in about 90 MB (measured on Node 24: 87,000 ranges,
 * 9.3 MB, took 175 MB); and no text longer than a line (bmaptool's explanations are comments).
 */
const BMAP_LIMITS = { markup: 128 * 1024, text: 4096 };

const DIGEST_LENGTH = { sha256: 64, sha1: 40 } as const;

function bad(name: string, why: string): JobError {
  return jobError('source-corrupt', `The block map ${name} is not valid: ${why}.`);
}

/** An element as fast-xml-parser gives it with alwaysCreateTextNode: its attributes and its text ('#text'). */
type Element = Record<string, unknown>;

/** The one child element `tag` of `parent`, or null; a repeated one makes the map ambiguous. */
function child(parent: Element, tag: string, name: string): Element | null {
  const value = parent[tag];
  if (value === undefined) return null;
  if (Array.isArray(value)) throw bad(name, `it has more than one <${tag}>`);
  return typeof value === 'object' && value !== null ? (value as Element) : {};
}

function textOf(element: Element | null): string | null {
  if (element === null) return null;
  const text = element['#text'];
  return typeof text === 'string' ? text : '';
}

/** A decimal count (bmaptool writes nothing else); NaN otherwise. */
function count(element: Element | null): number {
  const text = textOf(element);
  return text !== null && /^\d{1,16}$/.test(text) ? Number(text) : NaN;
}

/**
 * The file's text with the value of its checksum element replaced by zeros, as bmaptool hashes
 * it: null when the value is not where the element's first occurrence says.
 */
function zeroedChecksum(xml: string, tag: string, value: string): string | null {
  const open = xml.indexOf(`<${tag}>`);
  if (open < 0) return null;
  let at = open + tag.length + 2;
  while (at < xml.length && /\s/.test(xml.charAt(at))) at++;
  if (!xml.startsWith(value, at)) return null;
  return xml.slice(0, at) + '0'.repeat(value.length) + xml.slice(at + value.length);
}

/**
 * Parses a bmap and checks its own checksum (BmapFileChecksum, or BmapFileSHA1 in 1.x: the
 * digest of the file with that value replaced by zeros), so a damaged map is refused before it
 * decides what gets written.
 */
export function parseBmap(xml: string, name: string): BlockMap {
  if (xml.length > MAX_BMAP_BYTES) throw bad(name, `it is larger than ${MAX_BMAP_BYTES} bytes`);
  let document: Element;
  try {
    document = parseXml(
      xml,
      {
        ignoreAttributes: false,
        attributeNamePrefix: '',
        alwaysCreateTextNode: true,
        isArray: (tag) => tag === 'Range',
      },
      BMAP_LIMITS,
    ) as Element;
  } catch (error) {
    if (error instanceof XmlError) throw bad(name, `it ${error.message}`);
    throw error;
  }
  const root = child(document, 'bmap', name);
  const version = /^(\d+)\.(\d+)$/.exec(typeof root?.['version'] === 'string' ? root['version'] : '');
  if (root === null || version === null) throw bad(name, 'no <bmap version="…"> element');
  const major = Number(version[1]);
  if (major < 1 || major > 2) throw bad(name, `version ${version[1]}.${version[2]} is not one Sluice knows (1.x, 2.x)`);
  const imageSize = count(child(root, 'ImageSize', name));
  const blockSize = count(child(root, 'BlockSize', name));
  if (!Number.isSafeInteger(imageSize) || imageSize <= 0) throw bad(name, 'no valid <ImageSize>');
  if (!Number.isSafeInteger(blockSize) || blockSize <= 0 || blockSize % 512 !== 0)
    throw bad(name, 'no valid <BlockSize>');
  const digestAlgorithm = major >= 2 ? (textOf(child(root, 'ChecksumType', name)) ?? 'sha256').toLowerCase() : 'sha1';
  if (digestAlgorithm !== 'sha256' && digestAlgorithm !== 'sha1')
    throw bad(name, `checksum type ${digestAlgorithm} is not supported`);

  const fileChecksumTag = major >= 2 ? 'BmapFileChecksum' : 'BmapFileSHA1';
  const fileChecksum = textOf(child(root, fileChecksumTag, name));
  if (fileChecksum !== null) {
    const zeroed = zeroedChecksum(xml, fileChecksumTag, fileChecksum);
    const actual = zeroed === null ? null : createHash(digestAlgorithm).update(zeroed).digest('hex');
    if (actual !== fileChecksum.toLowerCase())
      throw bad(name, `its own checksum does not match (the file is damaged or was edited)`);
  }

  const ranges: MappedRange[] = [];
  const attribute = major >= 2 ? 'chksum' : 'sha1';
  // bmaptool lists the ranges in <BlockMap>; a map without one lists them in <bmap> itself.
  const listed = (child(root, 'BlockMap', name) ?? root)['Range'];
  let end = 0;
  let mappedBlocks = 0;
  for (const range of Array.isArray(listed) ? (listed as Element[]) : []) {
    const text = textOf(range) ?? '';
    const bounds = /^(\d{1,16})(?:\s*-\s*(\d{1,16}))?$/.exec(text);
    if (bounds === null) throw bad(name, `range "${text.slice(0, 40)}" is not a block number or a span of them`);
    const first = Number(bounds[1]);
    const last = bounds[2] === undefined ? first : Number(bounds[2]);
    const given = range[attribute];
    const digest = typeof given === 'string' && given !== '' ? given : null;
    if (digest !== null && (digest.length !== DIGEST_LENGTH[digestAlgorithm] || !/^[0-9a-fA-F]+$/.test(digest)))
      throw bad(name, `range ${text} has a checksum that is not a ${digestAlgorithm.toUpperCase()} digest`);
    const offset = first * blockSize;
    const length = Math.min(imageSize, (last + 1) * blockSize) - offset;
    if (last < first || offset < end || length <= 0)
      throw bad(name, `range ${bounds[1]}-${bounds[2] ?? bounds[1]} is out of order or outside the image`);
    ranges.push({ offset, length, digest });
    end = offset + length;
    mappedBlocks += last - first + 1;
  }
  const declaredBlocks = child(root, 'MappedBlocksCount', name);
  if (declaredBlocks !== null && count(declaredBlocks) !== mappedBlocks)
    throw bad(name, `it declares ${textOf(declaredBlocks)} mapped blocks, but its ranges map ${mappedBlocks}`);
  const mappedBytes = ranges.reduce((sum, r) => sum + r.length, 0);
  return { imageSize, blockSize, ranges, digestAlgorithm, mappedBytes };
}
