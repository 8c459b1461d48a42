/**
 * An OS catalogue: the list Raspberry Pi Imager reads (os_list v4, `os_list_imagingutility_v4.json`)
 * and that other vendors publish in the same schema, as Sluice holds it once read and checked
 * (user/catalogue/os-list.ts). Plain data: it crosses from the catalogue process to the CLI, the
 * app's main process and the page as is. The pure functions below filter it by board and find an
 * entry by its path.
 */

/** Raspberry Pi's own list, the repository used when none is named. */
export const DEFAULT_REPOSITORY = 'https://downloads.raspberrypi.com/os_list_imagingutility_v4.json';

/** How an image names a catalogue entry on the command line: `os:PATH` or `os:NAME`. */
export const OS_PREFIX = 'os:';

/**
 * How an OS wants to be customised on first boot, as its catalogue entry says (`init_format`). Only
 * a hint: the image's own contents win when they disagree (the customisation code reads them).
 * 'none' also stands for Imager's empty string, which says the same.
 */
export const INIT_FORMATS = ['systemd', 'cloudinit', 'cloudinit-rpi', 'rpi-preseed', 'none'] as const;
export type InitFormat = (typeof INIT_FORMATS)[number];

/** An OS image a catalogue offers. Every size and checksum is the publisher's claim, checked while it is written. */
export interface CatalogueOs {
  kind: 'os';
  name: string;
  description: string;
  /** An absolute http(s) or file: address; null when the entry has none. */
  icon: string | null;
  /** Where the image is downloaded from (http or https), or a local path (a local manifest's file: address). */
  url: string;
  /** As the publisher wrote it, usually YYYY-MM-DD. */
  releaseDate: string;
  /** Bytes the image has once decompressed (what the drive receives). */
  extractSize: number;
  /** SHA-256 of the decompressed image. */
  extractSha256: string;
  /** Bytes of the download (compressed). */
  downloadSize: number;
  /** SHA-256 of the download, when the catalogue gives it (Raspberry Pi's does). */
  downloadSha256: string | null;
  /** The board tags the image runs on; null when the entry names none (see boardMatches). */
  devices: string[] | null;
  initFormat: InitFormat | null;
  architecture: string | null;
  website: string | null;
  bmapUrl: string | null;
}

/** A folder of the catalogue: its entries inline, or in another document fetched when it is opened. */
export interface CatalogueCategory {
  kind: 'category';
  name: string;
  description: string;
  icon: string | null;
  website: string | null;
  /** The entries; null until the document at subitemsUrl has been read. */
  items: CatalogueItem[] | null;
  /** The document that holds the entries (absolute address); null when they are inline. */
  subitemsUrl: string | null;
}

export type CatalogueItem = CatalogueOs | CatalogueCategory;

/** A board the catalogue knows (`imager.devices`): choosing one filters the list to what runs on it. */
export interface CatalogueBoard {
  name: string;
  description: string;
  icon: string | null;
  tags: string[];
  /**
   * 'exclusive' (Imager's default): only entries that name one of the tags. 'inclusive': those,
   * and also entries that name no boards at all.
   */
  matchingType: 'exclusive' | 'inclusive';
  architecture: string | null;
}

/** One document of a catalogue, as read and checked. */
export interface CatalogueDocument {
  /** Where it was read from: an http(s) address or a local file's path. */
  source: string;
  /** Its `imager.devices`; a document reached through subitems_url has none of its own. */
  boards: CatalogueBoard[];
  items: CatalogueItem[];
  /** One sentence per entry or board that was skipped because it does not match the schema. */
  notes: string[];
  /** Set when the source could not be reached and the copy saved when it last could was used. */
  offline: { savedAt: number; reason: string } | null;
}

/** What a board filter keeps: entries that name one of `tags`, and with `inclusive` those that name none. */
export interface BoardFilter {
  tags: readonly string[];
  inclusive: boolean;
}

export function boardFilter(board: CatalogueBoard): BoardFilter {
  return { tags: board.tags, inclusive: board.matchingType === 'inclusive' };
}

/**
 * Whether `os` runs on the filtered board, as Imager decides it: one of its devices is among the
 * board's tags; an entry that names no devices is kept only by an inclusive board, and one that
 * names an empty list by none.
 */
export function boardMatches(os: CatalogueOs, filter: BoardFilter): boolean {
  if (os.devices === null) return filter.inclusive;
  return os.devices.some((device) => filter.tags.includes(device));
}

/**
 * The items that run on the filtered board. A category stays when something in it does; one whose
 * document has not been read yet stays too, since what it holds is not known (it is filtered once
 * it is read).
 */
export function filterItems(items: readonly CatalogueItem[], filter: BoardFilter | null): CatalogueItem[] {
  if (filter === null) return [...items];
  const kept: CatalogueItem[] = [];
  for (const item of items) {
    if (item.kind === 'os') {
      if (boardMatches(item, filter)) kept.push(item);
    } else if (item.items === null) {
      kept.push(item);
    } else {
      const inside = filterItems(item.items, filter);
      if (inside.length > 0) kept.push({ ...item, items: inside });
    }
  }
  return kept;
}

/** The separator of an entry's path in the category tree ("Raspberry Pi OS (other)/Raspberry Pi OS Lite (64-bit)"). */
export const PATH_SEPARATOR = '/';

/** An OS entry with where it sits: the names of the categories above it and its own. */
export interface PlacedOs {
  os: CatalogueOs;
  path: string[];
}

/** Every OS entry under `items` (read so far), depth first, with its path. */
export function placedEntries(items: readonly CatalogueItem[], above: readonly string[] = []): PlacedOs[] {
  const out: PlacedOs[] = [];
  for (const item of items) {
    const path = [...above, item.name];
    if (item.kind === 'os') out.push({ os: item, path });
    else if (item.items !== null) out.push(...placedEntries(item.items, path));
  }
  return out;
}

export function pathText(path: readonly string[]): string {
  return path.join(PATH_SEPARATOR);
}

/**
 * The entry `wanted` names among `entries`: its exact path, else a name that only one entry has.
 * Returns the entry, or why there is none (no match, or the names of every entry that matches).
 */
export function findEntry(
  entries: readonly PlacedOs[],
  wanted: string,
): PlacedOs | { missing: true } | { ambiguous: string[] } {
  const exact = entries.filter((e) => pathText(e.path) === wanted);
  if (exact.length === 1 && exact[0] !== undefined) return exact[0];
  const named = exact.length > 1 ? exact : entries.filter((e) => e.os.name === wanted);
  if (named.length === 1 && named[0] !== undefined) return named[0];
  if (named.length === 0) return { missing: true };
  return { ambiguous: named.map((e) => pathText(e.path)) };
}

/** The SHA-256 an entry's download is kept by in the image cache: the download's own, else the decompressed image's. */
export function cacheKey(os: CatalogueOs): string {
  return os.downloadSha256 ?? os.extractSha256;
}
