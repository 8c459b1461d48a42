/**
 * Reads one document of an OS catalogue in Raspberry Pi Imager's os_list v4 schema (its
 * doc/json-schema/os-list-schema.json), which other vendors publish too, and the
 * `.rpi-imager-manifest` files of Imager 2.0.3, which are the same document under another name
 * (usually with file: addresses to images and icons on this computer). The bytes come from a
 * server or a file Sluice does not control, so the document is bounded before it is parsed
 * (MAX_DOCUMENT_BYTES, MAX_DEPTH), and each entry and board is checked on its own: one that does
 * not match the schema is skipped with a note, never shown half-filled, and the others stay.
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import * as v from 'valibot';
import {
  INIT_FORMATS,
  type CatalogueBoard,
  type CatalogueDocument,
  type CatalogueItem,
  type CatalogueOs,
  type InitFormat,
} from '../../common/domain/catalogue.js';
import { jobError } from '../../common/domain/failure.js';
import { MiB } from '../../common/domain/units.js';

/** A catalogue document is at most this large (Raspberry Pi's whole top-level list is about 60 KB). */
export const MAX_DOCUMENT_BYTES = 1 * MiB;
/**
 * Levels of entries, the top document's being the first: categories nest at most this deep,
 * inline or through subitems_url (Imager stops at 16 too).
 */
export const MAX_DEPTH = 16;
/** Notes kept per document; past them, one more says how many were left out. */
const MAX_NOTES = 100;

/** Where a document was read from, and how deep in the catalogue it sits. */
export interface DocumentPlace {
  /** An http(s) address, or a local file's path. */
  source: string;
  /** Depth of the category whose entries this document holds: 0 for a catalogue's top document. */
  depth: number;
}

/** Whether `source` names a local file rather than a download. */
export function isLocalSource(source: string): boolean {
  return !/^https?:\/\//i.test(source);
}

const Name = v.pipe(v.string(), v.minLength(1), v.maxLength(256));
const Description = v.pipe(v.string(), v.maxLength(4096));
const Address = v.pipe(v.string(), v.minLength(1), v.maxLength(4096));
const Short = v.pipe(v.string(), v.maxLength(64));
const Size = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(Number.MAX_SAFE_INTEGER));
const Sha256 = v.pipe(v.string(), v.regex(/^[0-9a-fA-F]{64}$/, 'Invalid SHA-256: expected 64 hexadecimal digits'));
const Tags = v.pipe(v.array(v.pipe(v.string(), v.maxLength(256))), v.maxLength(1024));

/** Fields every item has (the schema's three kinds of entries share them). */
const ItemFields = {
  name: Name,
  description: Description,
  icon: v.optional(Address),
  website: v.optional(Address),
};

const OsSchema = v.object({
  ...ItemFields,
  url: Address,
  release_date: Short,
  extract_size: Size,
  extract_sha256: Sha256,
  image_download_size: Size,
  image_download_sha256: v.optional(Sha256),
  // Imager's filter treats an entry without devices as one for every board (inclusive filters only).
  devices: v.optional(Tags),
  // Any string: a format this version does not know is no reason to hide the OS (see initFormat).
  init_format: v.optional(Short),
  architecture: v.optional(Short),
  bmap_url: v.optional(Address),
});

const CategorySchema = v.object({
  ...ItemFields,
  subitems: v.optional(v.array(v.unknown())),
  subitems_url: v.optional(Address),
});

const BoardSchema = v.object({
  name: Name,
  description: Description,
  icon: v.optional(Address),
  tags: Tags,
  matching_type: v.optional(v.picklist(['exclusive', 'inclusive'])),
  architecture: v.optional(Short),
});

/** The document's frame: the list, and Imager's own metadata with its boards. */
const DocumentSchema = v.object({
  imager: v.optional(v.object({ devices: v.optional(v.array(v.unknown())) })),
  os_list: v.array(v.unknown()),
});

/** Why one value was refused: its field and valibot's words, for the note. */
function problem(issues: readonly v.BaseIssue<unknown>[]): string {
  const [first] = issues;
  if (first === undefined) return 'it does not match the schema';
  const field = first.path?.map((step) => String(step.key)).join('.');
  const words = first.input === undefined ? 'missing' : first.message;
  return `${field ? `${field}: ` : ''}${words}`;
}

/** A value that cannot be used, with the words for the note. */
class Refused extends Error {}

/** The notes of one document, capped. */
class Notes {
  readonly list: string[] = [];
  private dropped = 0;

  add(note: string): void {
    if (this.list.length < MAX_NOTES) this.list.push(note);
    else this.dropped += 1;
  }

  done(): string[] {
    return this.dropped === 0 ? this.list : [...this.list, `… and ${this.dropped} more entries skipped.`];
  }
}

/** Reads a document's addresses relative to where it was read from, as a browser would. */
class Addresses {
  private readonly base: URL;
  private readonly local: boolean;

  constructor(source: string) {
    this.local = isLocalSource(source);
    this.base = this.local ? pathToFileURL(resolve(source)) : new URL(source);
  }

  /**
   * An absolute address: http(s) from any document, but only https from one read over https (what
   * it names must not be open to anyone on the way); file: only from a local one (a catalogue on a
   * server must not point Sluice at this computer's files).
   */
  href(value: string, field: string): string {
    let url: URL;
    try {
      url = new URL(value, this.base);
    } catch {
      throw new Refused(`${field}: "${value.slice(0, 200)}" is not an address`);
    }
    if (url.protocol === 'http:' && this.base.protocol === 'https:')
      throw new Refused(
        `${field}: ${url.href.slice(0, 200)} is plain http, in a catalogue read over https; its publisher must give an https address`,
      );
    if (url.protocol === 'http:' || url.protocol === 'https:') return url.href;
    if (url.protocol === 'file:' && this.local) return url.href;
    throw new Refused(
      `${field}: ${url.protocol} addresses are not allowed here (${this.local ? 'http, https or file' : 'http or https only, from a catalogue on a server'})`,
    );
  }

  /** The image's address: a download's URL, or a local image's path. */
  image(value: string): string {
    const href = this.href(value, 'url');
    return href.startsWith('file:') ? fileURLToPath(href) : href;
  }
}

function initFormat(value: string | undefined): InitFormat | null {
  if (value === undefined) return null;
  if (value === '') return 'none';
  return (INIT_FORMATS as readonly string[]).includes(value) ? (value as InitFormat) : null;
}

/** Reads a document's entries, recursing into inline categories. */
class Reader {
  readonly notes = new Notes();

  constructor(
    private readonly addresses: Addresses,
    private readonly where: string,
  ) {}

  items(values: readonly unknown[], depth: number, at: string): CatalogueItem[] {
    const items: CatalogueItem[] = [];
    values.forEach((value, index) => {
      const place = `${at}[${index}]`;
      try {
        items.push(this.item(value, depth, place));
      } catch (error) {
        if (!(error instanceof Refused)) throw error;
        this.notes.add(`${this.where}: ${place}${nameOf(value)} skipped: ${error.message}.`);
      }
    });
    return items;
  }

  private item(value: unknown, depth: number, place: string): CatalogueItem {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Refused('not an object');
    const isCategory = 'subitems' in value || 'subitems_url' in value;
    return isCategory ? this.category(value, depth, place) : this.os(value);
  }

  private os(value: object): CatalogueOs {
    const parsed = v.safeParse(OsSchema, value);
    if (!parsed.success) throw new Refused(problem(parsed.issues));
    const e = parsed.output;
    const format = initFormat(e.init_format);
    if (e.init_format !== undefined && format === null)
      this.notes.add(
        `${this.where}: "${e.name}" names an init_format Sluice does not know ("${e.init_format.slice(0, 64)}"): it is listed without a customisation hint.`,
      );
    const url = this.addresses.image(e.url);
    return {
      kind: 'os',
      name: e.name,
      description: e.description,
      icon: e.icon === undefined ? null : this.addresses.href(e.icon, 'icon'),
      url,
      releaseDate: e.release_date,
      extractSize: e.extract_size,
      extractSha256: e.extract_sha256.toLowerCase(),
      downloadSize: e.image_download_size,
      downloadSha256: e.image_download_sha256?.toLowerCase() ?? null,
      devices: e.devices ?? null,
      initFormat: format,
      architecture: e.architecture ?? null,
      website: e.website === undefined ? null : this.addresses.href(e.website, 'website'),
      bmapUrl: e.bmap_url === undefined ? null : this.addresses.href(e.bmap_url, 'bmap_url'),
    };
  }

  private category(value: object, depth: number, place: string): CatalogueItem {
    const parsed = v.safeParse(CategorySchema, value);
    if (!parsed.success) throw new Refused(problem(parsed.issues));
    const c = parsed.output;
    if (depth + 1 >= MAX_DEPTH) throw new Refused(`categories nest deeper than ${MAX_DEPTH} levels`);
    const inline = c.subitems !== undefined;
    return {
      kind: 'category',
      name: c.name,
      description: c.description,
      icon: c.icon === undefined ? null : this.addresses.href(c.icon, 'icon'),
      website: c.website === undefined ? null : this.addresses.href(c.website, 'website'),
      items: inline ? this.items(c.subitems ?? [], depth + 1, `${place}.subitems`) : null,
      subitemsUrl: inline || c.subitems_url === undefined ? null : this.addresses.href(c.subitems_url, 'subitems_url'),
    };
  }

  boards(values: readonly unknown[]): CatalogueBoard[] {
    const boards: CatalogueBoard[] = [];
    values.forEach((value, index) => {
      const parsed = v.safeParse(BoardSchema, value);
      try {
        if (!parsed.success) throw new Refused(problem(parsed.issues));
        const b = parsed.output;
        boards.push({
          name: b.name,
          description: b.description,
          icon: b.icon === undefined ? null : this.addresses.href(b.icon, 'icon'),
          tags: b.tags,
          matchingType: b.matching_type ?? 'exclusive',
          architecture: b.architecture ?? null,
        });
      } catch (error) {
        if (!(error instanceof Refused)) throw error;
        this.notes.add(`${this.where}: board imager.devices[${index}]${nameOf(value)} skipped: ${error.message}.`);
      }
    });
    return boards;
  }
}

/** ` ("Name")` when the value has a usable name, for notes. */
function nameOf(value: unknown): string {
  const name = typeof value === 'object' && value !== null && 'name' in value ? value.name : undefined;
  return typeof name === 'string' && name.length > 0 ? ` ("${name.slice(0, 100)}")` : '';
}

/**
 * Reads a catalogue document. Throws a JobError (source-corrupt) when the document as a whole
 * cannot be used: too large, not JSON, or no `os_list` array. Entries and boards that do not
 * match the schema are left out, each with a note.
 */
export function parseOsList(bytes: Buffer, place: DocumentPlace): Omit<CatalogueDocument, 'offline'> {
  const where = place.source;
  if (bytes.length > MAX_DOCUMENT_BYTES)
    throw jobError(
      'source-corrupt',
      `The catalogue ${where} is larger than ${MAX_DOCUMENT_BYTES / MiB} MiB, too large to be one.`,
    );
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw jobError('source-corrupt', `The catalogue ${where} is not JSON: ${(error as Error).message.slice(0, 200)}.`);
  }
  const frame = v.safeParse(DocumentSchema, json);
  if (!frame.success)
    throw jobError(
      'source-corrupt',
      `The catalogue ${where} is not an OS list (os_list v4): ${problem(frame.issues)}.`,
    );
  let addresses: Addresses;
  try {
    addresses = new Addresses(where);
  } catch {
    throw jobError('source-corrupt', `The catalogue's address ${where} is not an address.`);
  }
  const reader = new Reader(addresses, where);
  const items = reader.items(frame.output.os_list, place.depth, 'os_list');
  // Imager reads boards from the top-level document only.
  const boards = place.depth === 0 ? reader.boards(frame.output.imager?.devices ?? []) : [];
  return { source: where, boards, items, notes: reader.notes.done() };
}
