/**
 * The catalogue process's protocol (user/catalogue/process/main.ts): the parent sends one
 * CatalogueRequest over the IPC channel, the process reads the document (and, when asked, every
 * document below it) and answers with it or with the failure, and exits. It has just parsed JSON
 * from a server, so its answer is checked here on arrival, as the probe's is: a process that a
 * hostile catalogue got the better of can send nothing but a catalogue of honest shape and size.
 */
import * as v from 'valibot';
import {
  INIT_FORMATS,
  type CatalogueBoard,
  type CatalogueCategory,
  type CatalogueDocument,
  type CatalogueItem,
  type CatalogueOs,
} from '../domain/catalogue.js';
import { FailureSchema } from '../domain/failure.js';
import { ByteCount } from '../domain/wire.js';

/** Categories nest at most this deep (user/catalogue/os-list.ts MAX_DEPTH). */
export const MAX_CATALOGUE_DEPTH = 16;
/** Documents read for one request at most: the whole tree of a large vendor's list is a few dozen. */
export const MAX_CATALOGUE_DOCUMENTS = 256;

/** Notes one answer carries at most: the first of them say what is wrong. */
export const MAX_CATALOGUE_NOTES = 1000;

/** Parent → catalogue process. */
export const CatalogueRequest = v.strictObject({
  /** An http(s) address or a local file's path. */
  source: v.pipe(v.string(), v.minLength(1), v.maxLength(4096)),
  /** Depth of the category whose entries the document holds; 0 for a catalogue's top document. */
  depth: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(MAX_CATALOGUE_DEPTH)),
  /** Also read every subitems_url below it (the CLI lists or searches the whole tree). */
  expand: v.boolean(),
  /** Where documents are saved for offline use, and read from when the source cannot be reached; null: neither. */
  savedDir: v.nullable(v.pipe(v.string(), v.maxLength(4096))),
  /** Where the entries' icons are fetched to (the app shows them); null: not fetched. */
  iconsDir: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(4096)))),
  /**
   * The person added this catalogue themselves (the settings, --repo): its documents and icons may
   * be on this computer or the local network, as a lab mirror's are. False for one Sluice came
   * with: a catalogue from the internet must not make Sluice send requests to 127.0.0.1 or the LAN.
   */
  localNetwork: v.boolean(),
});
export type CatalogueRequest = v.InferOutput<typeof CatalogueRequest>;

const Text = v.pipe(v.string(), v.maxLength(4096));
const Name = v.pipe(v.string(), v.minLength(1), v.maxLength(256));
const OptionalText = v.nullable(Text);
const Sha256 = v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/));
const Tags = v.pipe(v.array(v.pipe(v.string(), v.maxLength(256))), v.maxLength(1024));

const OsSchema: v.GenericSchema<CatalogueOs> = v.strictObject({
  kind: v.literal('os'),
  name: Name,
  description: Text,
  icon: OptionalText,
  url: Text,
  releaseDate: v.pipe(v.string(), v.maxLength(64)),
  extractSize: ByteCount,
  extractSha256: Sha256,
  downloadSize: ByteCount,
  downloadSha256: v.nullable(Sha256),
  devices: v.nullable(Tags),
  initFormat: v.nullable(v.picklist(INIT_FORMATS)),
  architecture: v.nullable(v.pipe(v.string(), v.maxLength(64))),
  website: OptionalText,
  bmapUrl: OptionalText,
});

const CategorySchema: v.GenericSchema<CatalogueCategory> = v.strictObject({
  kind: v.literal('category'),
  name: Name,
  description: Text,
  icon: OptionalText,
  website: OptionalText,
  items: v.nullable(v.array(v.lazy(() => ItemSchema))),
  subitemsUrl: OptionalText,
});

const ItemSchema: v.GenericSchema<CatalogueItem> = v.union([OsSchema, CategorySchema]);

const BoardSchema: v.GenericSchema<CatalogueBoard> = v.strictObject({
  name: Name,
  description: Text,
  icon: OptionalText,
  tags: Tags,
  matchingType: v.picklist(['exclusive', 'inclusive']),
  architecture: v.nullable(v.pipe(v.string(), v.maxLength(64))),
});

export const CatalogueDocumentSchema: v.GenericSchema<CatalogueDocument> = v.strictObject({
  source: Text,
  boards: v.pipe(v.array(BoardSchema), v.maxLength(4096)),
  items: v.array(ItemSchema),
  notes: v.pipe(v.array(Text), v.maxLength(MAX_CATALOGUE_NOTES)),
  offline: v.nullable(v.strictObject({ savedAt: v.number(), reason: Text })),
});

/** Catalogue process → parent, its one message. */
export const CatalogueReply = v.variant('type', [
  v.strictObject({ type: v.literal('document'), document: CatalogueDocumentSchema }),
  v.strictObject({ type: v.literal('failed'), ...FailureSchema.entries }),
]);
export type CatalogueReply = v.InferOutput<typeof CatalogueReply>;

/**
 * Whether `value`'s objects and arrays nest no deeper than `limit`, found without recursion: the
 * schema above recurses through categories, so its input's depth is bounded first.
 */
export function nestsWithin(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (typeof node !== 'object' || node === null) continue;
    if (depth > limit) return false;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return true;
}
