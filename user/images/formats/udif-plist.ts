/**
 * The block tables (blkx) in a UDIF image's property list, read by a parser that keeps nothing
 * between calls. @balena/udif parses the list with @balena/apple-plist, whose XML reader is one
 * sax parser shared by the whole process: after one malformed list ("Unexpected close tag") it
 * refused every later list too, so one bad dmg broke every dmg probed after it.
 */
import { parseXml, XmlError } from './xml.js';

/**
 * What a UDIF property list may hold: a dozen elements per partition's blkx entry, and short
 * text; each <data> (the block tables, in base64) is taken whole, however long.
 */
const PLIST_LIMITS = { markup: 64 * 1024, text: 4096, raw: 'data' };

/** A blkx entry as the property list gives it. */
export interface BlkxEntry {
  id: number;
  attributes: number;
  name: string;
  coreFoundationName: string;
  /** The block table ("mish"), for @balena/udif's BlockMap.parse. */
  data: Buffer;
}

/** An element as fast-xml-parser gives it with preserveOrder: { tag: children } or { '#text': text }. */
type XmlNode = Record<string, unknown>;

function tagOf(node: XmlNode | undefined): string | null {
  if (node === undefined) return null;
  return Object.keys(node).find((key) => key !== ':@') ?? null;
}

function childrenOf(node: XmlNode | undefined): XmlNode[] {
  const tag = tagOf(node);
  const children = tag === null || tag === '#text' ? undefined : node?.[tag];
  return Array.isArray(children) ? (children as XmlNode[]) : [];
}

function textOf(node: XmlNode | undefined): string {
  return childrenOf(node)
    .map((child) => child['#text'])
    .filter((text): text is string => typeof text === 'string')
    .join('');
}

/** A <dict>'s entries: each <key> and the element after it. */
function dictOf(node: XmlNode | undefined, what: string): Map<string, XmlNode> {
  if (tagOf(node) !== 'dict') throw new Error(`${what} is not a dictionary`);
  const children = childrenOf(node);
  const entries = new Map<string, XmlNode>();
  for (let i = 0; i < children.length; i += 2) {
    const value = children[i + 1];
    if (tagOf(children[i]) !== 'key' || value === undefined)
      throw new Error(`${what} has a key without a value, or a value without a key`);
    entries.set(textOf(children[i]), value);
  }
  return entries;
}

/** The blkx entries of a UDIF property list (an empty list when it has none); throws when it is malformed. */
export function readBlkx(xml: string): BlkxEntry[] {
  let document: XmlNode[];
  try {
    document = parseXml(xml, { preserveOrder: true, ignoreAttributes: true }, PLIST_LIMITS) as XmlNode[];
  } catch (error) {
    if (error instanceof XmlError) throw new Error(`its property list ${error.message}`);
    throw error;
  }
  const plist = document.find((node) => tagOf(node) === 'plist');
  if (plist === undefined) throw new Error('its property list has no <plist> element');
  const resourceFork = dictOf(childrenOf(plist)[0], 'its property list').get('resource-fork');
  const blkx = dictOf(resourceFork, 'its resource-fork').get('blkx');
  if (blkx === undefined) return [];
  if (tagOf(blkx) !== 'array') throw new Error('its blkx is not an array');
  return childrenOf(blkx).map((node, i) => {
    const entry = dictOf(node, `its blkx entry ${i}`);
    const data = entry.get('Data');
    if (tagOf(data) !== 'data') throw new Error(`its blkx entry ${i} has no Data`);
    return {
      id: Number(textOf(entry.get('ID'))),
      attributes: Number(textOf(entry.get('Attributes'))),
      name: textOf(entry.get('Name')),
      coreFoundationName: textOf(entry.get('CFName')),
      data: Buffer.from(textOf(data), 'base64'),
    };
  });
}
