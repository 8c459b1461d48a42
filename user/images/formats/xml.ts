/**
 * The small XML documents that come with images (bmap files, a dmg's property list), read by a
 * real parser: regular expressions over them backtracked (an unclosed <ImageSize> followed by
 * 4,000 spaces took 21.6 s), and the plist parser @balena/udif brings keeps its state across
 * calls. Entities are never expanded, and no value is converted: the callers check every one.
 */
import { XMLParser, XMLValidator, type X2jOptions } from 'fast-xml-parser';

/** How much of the parser's complaint a message quotes: it can quote a whole stack of open tags. */
const MAX_REASON = 160;
/** The longest tag a bmap or plist has is bmaptool's <Range chksum="…">, under 100 characters. */
const MAX_TAG = 1024;
const EQUALS = '='.charCodeAt(0);

export class XmlError extends Error {}

/** What a document may hold, so that the parser never builds more than a few hundred MB. */
export interface XmlLimits {
  /** Elements and attributes: '<' and '=' outside comments, CDATA and raw elements. */
  markup: number;
  /** The longest text between two tags, which the parser builds one character at a time. */
  text: number;
  /** An element whose content the parser takes whole, as one string (its stop node). */
  raw?: string;
}

/**
 * Refuses, in one pass and before the parser builds anything, what would make it build too much.
 * fast-xml-parser keeps 200-550 bytes per element and per attribute, and builds text a character
 * at a time (measured on Node 24: 16 MiB of <a/> took 910 MB, 16 MiB of text between two tags
 * 700 MB, and 2 MB of 'a ' inside one tag 650 MB while it split them).
 */
function checkSize(text: string, limits: XmlLimits): void {
  const rawOpen = limits.raw === undefined ? null : `<${limits.raw}>`;
  let markup = 0;
  let at = text.indexOf('<');
  let textStart = 0;
  while (at >= 0) {
    if (at - textStart > limits.text)
      throw new XmlError(`has more than ${limits.text} characters of text at character ${textStart}`);
    const skipTo = text.startsWith('<!--', at)
      ? '-->'
      : text.startsWith('<![CDATA[', at)
        ? ']]>'
        : rawOpen !== null && text.startsWith(rawOpen, at)
          ? `</${limits.raw}>`
          : '>';
    const end = text.indexOf(skipTo, at + 1);
    if (end < 0) return; // Never closed: the parser says so.
    if (skipTo === '>') {
      if (end - at > MAX_TAG) throw new XmlError(`has a tag of more than ${MAX_TAG} characters at character ${at}`);
      for (let i = at; i < end; i++) if (text.charCodeAt(i) === EQUALS) markup += 1;
    }
    markup += 1;
    if (markup > limits.markup) throw new XmlError(`has more than ${limits.markup} elements and attributes`);
    textStart = end + skipTo.length;
    at = text.indexOf('<', textStart);
  }
  if (text.length - textStart > limits.text)
    throw new XmlError(`has more than ${limits.text} characters of text at character ${textStart}`);
}

/**
 * Parses `text`, which must be well-formed and within `limits`. The parser runs first, as it
 * stops at 100 nested elements (its default maxNestedTags), where the validator would follow
 * thousands; the validator then refuses what the lenient parser lets through (closing tags that
 * do not match, or missing). An XmlError's message says what is wrong, without a subject ("is
 * not well-formed XML (…)").
 */
export function parseXml(text: string, options: X2jOptions, limits: XmlLimits): unknown {
  checkSize(text, limits);
  let document: unknown;
  try {
    const stopNodes = limits.raw === undefined ? [] : [`*.${limits.raw}`];
    document = new XMLParser({
      ...options,
      stopNodes,
      processEntities: false,
      parseTagValue: false,
      parseAttributeValue: false,
      ignoreDeclaration: true,
      ignorePiTags: true,
    }).parse(text);
  } catch (error) {
    throw new XmlError(`is not well-formed XML (${shorten(error instanceof Error ? error.message : String(error))})`);
  }
  const valid = XMLValidator.validate(text);
  if (valid !== true)
    throw new XmlError(
      `is not well-formed XML (${unclosed(valid.err.msg) ?? `line ${valid.err.line}: ${shorten(valid.err.msg)}`})`,
    );
  return document;
}

/**
 * The validator's complaint about elements still open at the end ("Invalid '[ "bmap",
 * "ImageSize"]' found.") in words. At most 100 are open: the parser stopped deeper ones.
 */
function unclosed(message: string): string | null {
  const list = /^Invalid '(\[.*\])' found\.$/.exec(message)?.[1];
  if (list === undefined) return null;
  const tags = JSON.parse(list) as unknown;
  return Array.isArray(tags)
    ? shorten(`it ends with ${tags.map((tag) => `<${String(tag)}>`).join(', ')} still open`)
    : null;
}

function shorten(reason: string): string {
  const flat = reason.replace(/\s+/g, ' ');
  return flat.length > MAX_REASON ? `${flat.slice(0, MAX_REASON)}…` : flat;
}
