/**
 * The CLI's side of the catalogue: which repositories to read (--repo, else Raspberry Pi's list),
 * reading them in the catalogue process with their notes on stderr, finding an entry by its path
 * (reading only the documents along it) or by its name, and the image cache the commands share.
 */
import { resolve } from 'node:path';
import {
  DEFAULT_REPOSITORY,
  findEntry,
  placedEntries,
  type CatalogueDocument,
  type CatalogueItem,
  type PlacedOs,
} from '../common/domain/catalogue.js';
import { jobError } from '../common/domain/failure.js';
import { formatBytes } from '../common/domain/units.js';
import { cacheDir, savedCataloguesDir } from '../user/cache/cache-dir.js';
import { DEFAULT_LIMIT_BYTES, ImageCache } from '../user/cache/image-cache.js';
import { readCatalogueInChild } from '../user/catalogue/catalogue-launch.js';
import { isLocalSource } from '../user/catalogue/os-list.js';

/** A repository as the catalogue process takes it: a URL as given, a file by its absolute path. */
function sourceOf(repository: string): string {
  return isLocalSource(repository) ? resolve(repository) : repository;
}

/** The repositories named with --repo, else Raspberry Pi's. */
export function repositories(named: readonly string[] | undefined): string[] {
  return (named === undefined || named.length === 0 ? [DEFAULT_REPOSITORY] : named).map(sourceOf);
}

/** Where catalogue documents are saved for offline use. */
function savedDir(): string {
  return savedCataloguesDir(cacheDir());
}

/** What this command has said already: a document read twice (walked, then searched) is reported once. */
const said = new Set<string>();

function say(line: string): void {
  if (said.has(line)) return;
  said.add(line);
  process.stderr.write(`${line}\n`);
}

/** Says on stderr what the person should know about a document: skipped entries, and that it is an offline copy. */
function reportDocument(document: CatalogueDocument): void {
  if (document.offline !== null) {
    const when = new Date(document.offline.savedAt).toISOString().replace('T', ' ').slice(0, 16);
    say(
      `sluice: offline: showing the copy of ${document.source} saved on ${when} UTC (${document.offline.reason.replace(/\.$/, '')}).`,
    );
  }
  for (const note of document.notes) say(`sluice: note: ${note}`);
}

/**
 * Whether what `repository` names may be on this computer or the local network: yes for one the
 * person named with --repo, no for Raspberry Pi's, which this command reads when none is named.
 */
function addedByUser(repository: string): boolean {
  return repository !== DEFAULT_REPOSITORY;
}

/** Reads each repository's top document, and with `expand` every document below it. */
export async function readRepositories(sources: readonly string[], expand: boolean): Promise<CatalogueDocument[]> {
  const documents: CatalogueDocument[] = [];
  for (const source of sources) {
    const document = await readCatalogueInChild({
      source,
      depth: 0,
      expand,
      savedDir: savedDir(),
      localNetwork: addedByUser(source),
    });
    reportDocument(document);
    documents.push(document);
  }
  return documents;
}

/**
 * The entry at `wanted` as a path, reading only the documents along it ("Other/Deeper/OS" reads
 * three); null when no path leads there. Names may hold the separator themselves, so every
 * category whose name starts the rest of the path is tried.
 */
async function alongPath(
  items: readonly CatalogueItem[],
  rest: string,
  depth: number,
  above: string[],
  localNetwork: boolean,
): Promise<PlacedOs | null> {
  for (const item of items) {
    if (item.kind === 'os') {
      if (item.name === rest) return { os: item, path: [...above, item.name] };
      continue;
    }
    if (!rest.startsWith(`${item.name}/`)) continue;
    let inside = item.items;
    if (inside === null && item.subitemsUrl !== null) {
      const document = await readCatalogueInChild({
        source: item.subitemsUrl,
        depth: depth + 1,
        expand: false,
        savedDir: savedDir(),
        localNetwork,
      });
      reportDocument(document);
      inside = document.items;
    }
    const found =
      inside === null
        ? null
        : await alongPath(inside, rest.slice(item.name.length + 1), depth + 1, [...above, item.name], localNetwork);
    if (found !== null) return found;
  }
  return null;
}

/**
 * The entry `wanted` names (`os:PATH` or `os:NAME` without its prefix): a path is followed through
 * the documents on it; a name is looked for in the whole tree, where it must be the only one.
 * Throws a JobError that says what matched when nothing or too much does.
 */
export async function findCatalogueEntry(sources: readonly string[], wanted: string): Promise<PlacedOs> {
  for (const document of await readRepositories(sources, false)) {
    const found = await alongPath(document.items, wanted, 0, [], addedByUser(document.source));
    if (found !== null) return found;
  }
  const everything = (await readRepositories(sources, true)).flatMap((document) => placedEntries(document.items));
  const match = findEntry(everything, wanted);
  if ('os' in match) return match;
  if ('ambiguous' in match)
    throw jobError(
      'source-not-found',
      `"${wanted}" names ${match.ambiguous.length} entries of the catalogue: ${match.ambiguous.map((p) => `"${p}"`).join(', ')}. Name one by its path.`,
    );
  throw jobError(
    'source-not-found',
    `The catalogue has no entry "${wanted}" (sluice os list shows what it has: ${everything.length} entries).`,
  );
}

/** The image cache the commands share, with the limit from --cache-limit (default 20 GB). */
export function imageCache(limitBytes: number = DEFAULT_LIMIT_BYTES): ImageCache {
  return new ImageCache(cacheDir(), limitBytes);
}

/** "5.1 MB download, writes 16.8 MB" */
export function sizesText(downloadSize: number, extractSize: number): string {
  return `${formatBytes(downloadSize)} download, writes ${formatBytes(extractSize)}`;
}
