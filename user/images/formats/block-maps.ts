/**
 * The block map that applies to an image: a bmap file (given, next to the image, or inside a
 * zip). The result says what the decoder sends and checks, and what the user is told. A qcow2
 * image's allocation is no block map: its unallocated clusters read as zeros, and zeros are what
 * the drive must then hold (qemu-img convert to a device writes them too).
 */
import { basename } from 'node:path';
import type { BlockMap } from './bmap.js';
import { MAX_BMAP_BYTES } from './bmap-size.js';
import type { DecodeMap } from '../../../common/contracts/decoder-protocol.js';
import { jobError } from '../../../common/domain/failure.js';
import { mappedExtents } from '../feed/mapped-extents.js';
import { readSidecar } from '../files/sidecar-file.js';

/** Names a compressed image's block map may have: bmaptool puts `foo.img.bmap` next to `foo.img.xz`. */
export function bmapCandidates(path: string): string[] {
  const candidates = [`${path}.bmap`];
  const stripped = path.replace(/\.(xz|gz|bz2|zst|zip)$/i, '');
  if (stripped !== path) candidates.push(`${stripped}.bmap`);
  const bare = stripped.replace(/\.(img|raw|wic|bin|iso)$/i, '');
  if (bare !== stripped) candidates.push(`${bare}.bmap`);
  return candidates;
}

/** A block map for the decoder (what to send and check) and for the user (where it came from). */
export interface ChosenMap {
  decode: DecodeMap;
  from: string;
  mappedBytes: number;
  /** Ranges as the map gives them, before alignment and merging. */
  ranges: number;
  imageSize: number;
}

function fromBmap(map: BlockMap, file: string): ChosenMap {
  const decode: DecodeMap = {
    extents: mappedExtents(map.ranges, map.imageSize),
    ranges: map.ranges,
    digestAlgorithm: map.digestAlgorithm,
    name: basename(file),
  };
  return { decode, from: file, mappedBytes: map.mappedBytes, ranges: map.ranges.length, imageSize: map.imageSize };
}

/** Reads a bmap file: null when an optional one is missing; an error when it is required, or damaged. */
export async function readBmapFile(path: string, required: boolean): Promise<ChosenMap | null> {
  const bytes = await readSidecar(path, MAX_BMAP_BYTES, `The block map ${path}`);
  if (bytes === null) {
    if (!required) return null;
    throw jobError('source-read-error', `The block map ${path} cannot be read: there is no such file.`);
  }
  return parseBmapText(bytes.toString('utf8'), basename(path), path);
}

/** The block map in `xml`, named `name` in errors; its parser is loaded only when there is a map. */
export async function parseBmapText(xml: string, name: string, file: string): Promise<ChosenMap> {
  const { parseBmap } = await import('./bmap.js');
  return fromBmap(parseBmap(xml, name), file);
}
