/**
 * The small XML documents that come with images (bmap files, a dmg's property list), read by a
 * real parser: regular expressions over them backtracked (an unclosed <ImageSize> followed by
 * 4,000 spaces took 21.6 s), and the plist parser @balena/udif brings keeps its state across
 * calls. Entities are never expanded, and no value is converted: the callers check every one.
 */
import { XMLParser, XMLValidator, type X2jOptions } from 'fast-xml-parser';

/** How much of the parser's complaint a message quotes: it can quote a whole stack of open tags. */
const MAX_REASON = 160;

export class XmlError extends Error {}

/**
 * Parses `text`, which must be well-formed. The parser runs first, as it stops at 100 nested
 * elements (its default maxNestedTags), where the validator would follow millions; the validator
 * then refuses what the lenient parser lets through (closing tags that do not match, or missing).
 */
export function parseXml(text: string, options: X2jOptions): unknown {
  let document: unknown;
  try {
    document = new XMLParser({ ...options, processEntities: false, parseTagValue: false, parseAttributeValue: false, ignoreDeclaration: true, ignorePiTags: true }).parse(text);
  } catch (error) {
    throw new XmlError(shorten(error instanceof Error ? error.message : String(error)));
  }
  const valid = XMLValidator.validate(text);
  if (valid !== true) throw new XmlError(`line ${valid.err.line}: ${shorten(valid.err.msg)}`);
  return document;
}

function shorten(reason: string): string {
  const flat = reason.replace(/\s+/g, ' ');
  return flat.length > MAX_REASON ? `${flat.slice(0, MAX_REASON)}…` : flat;
}
