/**
 * What the app's page gets about the OS catalogue and the image cache ("Choose OS" and the
 * settings page), and the arguments it may send about them. Types and schemas only.
 */
import * as v from 'valibot';
import type { CatalogueDocument } from '../domain/catalogue.js';
import { MAX_CATALOGUE_DEPTH } from './catalogue-protocol.js';

/**
 * One catalogue document as the page shows it. Its icons are the app's own addresses
 * (`/catalogue-icon/<sha256>`, served from the icons the catalogue process fetched and the main
 * process checks again), or null: the window never loads anything from a catalogue's server.
 */
export interface CatalogueView extends CatalogueDocument {
  /** The cache keys (common/domain/catalogue.ts cacheKey) of the images the cache holds complete: the "cached" badges. */
  cached: string[];
}

/** Where the app serves catalogue icons, under its own origin. */
export const CATALOGUE_ICON_PATH = '/catalogue-icon/';

/** A catalogue document to read: one of the repositories in the settings, or a subitems_url of a document read before. */
export const CatalogueSourceSchema = v.pipe(v.string(), v.minLength(1), v.maxLength(4096));

/** An entry's place in the document it was read from: the names of the inline categories above it, then its own. */
export const CataloguePathSchema = v.pipe(
  v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(256))),
  v.minLength(1),
  v.maxLength(MAX_CATALOGUE_DEPTH + 1),
);

/** One image in the cache, as the settings page lists it. */
export interface CachedImageView {
  key: string;
  name: string | null;
  complete: boolean;
  /** Bytes on disk. */
  bytes: number;
  /** Bytes of the whole download, when known (a partial entry shows how far it got). */
  size: number | null;
  lastUsed: number;
}

export interface CacheView {
  /** The cache's folder. */
  dir: string;
  limitBytes: number;
  entries: CachedImageView[];
}
