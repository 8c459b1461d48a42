/**
 * The app's side of the OS catalogue and the image cache: reads the documents the page asks for
 * in the catalogue process (with their icons), gives the page each document with its icons as the
 * app's own addresses and the cached entries marked, finds the entry the page chose in what was
 * read here (the page names it, it never hands over an address or a checksum), and lists or
 * clears the cache.
 *
 * Only two kinds of document are read: a repository in the settings, and a subitems_url that a
 * document read here named. The page cannot make the main process fetch an address of its own.
 */
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { ok, refuse, refused, type ApiResult } from '../../common/contracts/api-result.js';
import { CATALOGUE_ICON_PATH, type CacheView, type CatalogueView } from '../../common/contracts/catalogue-view.js';
import {
  DEFAULT_REPOSITORY,
  type CatalogueDocument,
  type CatalogueItem,
  type CatalogueOs,
} from '../../common/domain/catalogue.js';
import type { Customisation } from '../../common/domain/customisation.js';
import { jobError, JobError } from '../../common/domain/failure.js';
import { catalogueIconsDir, savedCataloguesDir } from '../../user/cache/cache-dir.js';
import { ImageCache } from '../../user/cache/image-cache.js';
import { readCatalogueInChild } from '../../user/catalogue/catalogue-launch.js';
import { prepareCatalogueImage, type CatalogueImage } from '../../user/catalogue/catalogue-image.js';
import { iconFileName } from '../../user/catalogue/icon-files.js';
import type { PreparedImage } from '../../user/images/probe/probe.js';
import type { ProbedImage } from './image-probe.js';
import type { SettingsStore } from './settings-store.js';

/** The entry at `path` (inline category names, then its own) among `items`, or null. */
function entryAt(items: readonly CatalogueItem[], path: readonly string[]): CatalogueOs | null {
  const [name, ...rest] = path;
  const item = items.find((i) => i.name === name && (rest.length === 0 ? i.kind === 'os' : i.kind === 'category'));
  if (item === undefined) return null;
  if (item.kind === 'os') return item;
  return item.items === null ? null : entryAt(item.items, rest);
}

/** Where a document sits: the depth of the category it holds, and whether it may be on the local network (CatalogueRequest.localNetwork). */
interface Place {
  depth: number;
  localNetwork: boolean;
}

function subitemsOf(items: readonly CatalogueItem[], at: Place, into: Map<string, Place>): void {
  for (const item of items) {
    if (item.kind !== 'category') continue;
    const below = { ...at, depth: at.depth + 1 };
    if (item.subitemsUrl !== null && !into.has(item.subitemsUrl)) into.set(item.subitemsUrl, below);
    if (item.items !== null) subitemsOf(item.items, below, into);
  }
}

export class AppCatalogue {
  /** Documents read, by their source. */
  private readonly documents = new Map<string, CatalogueDocument>();
  /** The subitems_url addresses documents read here named, with where each sits. */
  private readonly subitems = new Map<string, Place>();

  constructor(
    private readonly settings: SettingsStore,
    /** The cache folder (user/cache/cache-dir.ts): images, saved documents, icons. */
    readonly cacheDir: string,
  ) {}

  get iconsDir(): string {
    return catalogueIconsDir(this.cacheDir);
  }

  private cache(): ImageCache {
    return new ImageCache(this.cacheDir, this.settings.get().cacheLimitBytes);
  }

  /**
   * Where a source may be read: at depth 0 a repository in the settings, on the local network
   * only if the person added it (not Raspberry Pi's, which the settings start with); a known
   * subitems_url as the document that named it. Null for anything else.
   */
  private placeOf(source: string): Place | null {
    if (this.settings.get().repositories.includes(source))
      return { depth: 0, localNetwork: source !== DEFAULT_REPOSITORY };
    return this.subitems.get(source) ?? null;
  }

  /** Icons as the app's own addresses, where the icon was fetched; null where it was not. */
  private async localIcons<T extends { icon: string | null }>(item: T): Promise<T> {
    if (item.icon === null) return item;
    const name = iconFileName(item.icon);
    const there = await access(join(this.iconsDir, name)).then(
      () => true,
      () => false,
    );
    return { ...item, icon: there ? `${CATALOGUE_ICON_PATH}${name}` : null };
  }

  private async viewItems(items: readonly CatalogueItem[]): Promise<CatalogueItem[]> {
    return Promise.all(
      items.map(async (item) => {
        const shown = await this.localIcons(item);
        return shown.kind === 'category' && shown.items !== null
          ? { ...shown, items: await this.viewItems(shown.items) }
          : shown;
      }),
    );
  }

  /** Reads `source` (a repository of the settings, or a subitems_url named by a document read before), with its icons. */
  async read(source: string): Promise<ApiResult<CatalogueView>> {
    const place = this.placeOf(source);
    if (place === null)
      return refuse(
        'invalid-request',
        'That catalogue is not among the repositories in the settings, nor named by one of them.',
      );
    let document: CatalogueDocument;
    try {
      document = await readCatalogueInChild({
        source,
        ...place,
        expand: false,
        savedDir: savedCataloguesDir(this.cacheDir),
        iconsDir: this.iconsDir,
      });
    } catch (error) {
      if (error instanceof JobError) return refused(error.failure);
      throw error;
    }
    this.documents.set(source, document);
    subitemsOf(document.items, place, this.subitems);
    const cached = (await this.cache().entries()).filter((e) => e.complete).map((e) => e.key);
    const boards = await Promise.all(document.boards.map((board) => this.localIcons(board)));
    return ok({ ...document, boards, items: await this.viewItems(document.items), cached });
  }

  /**
   * The entry at `path` in the document read from `source`, looked at as it would be flashed:
   * probed from the cache when it is there (so it is chosen offline too), else from its server;
   * nothing is downloaded into the cache or evicted until it is flashed.
   */
  async probe(source: string, path: readonly string[]): Promise<ProbedImage> {
    const document = this.documents.get(source);
    const os = document === undefined ? null : entryAt(document.items, path);
    if (os === null)
      throw jobError(
        'source-not-found',
        `The catalogue has no entry "${path.join('/')}" any more. Open the list again.`,
      );
    const image = await prepareCatalogueImage(os, {
      cache: this.cache(),
      keep: false,
      systemTools: false,
      partitions: true,
    });
    return { info: image.prepared.info, local: null, source: { kind: 'catalogue', os } };
  }

  /**
   * What customising `os` with each of `cards` writes, looked at as `probe` looks (nothing kept or
   * evicted): the Customise step's preview.
   */
  async prepareCustomised(os: CatalogueOs, cards: Customisation[]): Promise<PreparedImage> {
    return (
      await prepareCatalogueImage(os, {
        cache: this.cache(),
        keep: false,
        systemTools: false,
        partitions: true,
        customise: cards,
      })
    ).prepared;
  }

  /**
   * Prepares a chosen entry for its flash: from the cache, or downloaded while it is written and
   * kept in the cache; with each card's customisation planned when `cards` are given.
   */
  prepareForFlash(os: CatalogueOs, cards?: Customisation[]): Promise<CatalogueImage> {
    return prepareCatalogueImage(os, { cache: this.cache(), systemTools: false, partitions: false, customise: cards });
  }

  async cacheView(): Promise<CacheView> {
    const cache = this.cache();
    const entries = (await cache.entries()).map(({ key, name, complete, bytes, size, lastUsed }) => ({
      key,
      name,
      complete,
      bytes,
      size,
      lastUsed,
    }));
    return { dir: cache.dir, limitBytes: cache.limitBytes, entries };
  }

  async clearCache(): Promise<CacheView> {
    await this.cache().clear();
    return this.cacheView();
  }
}
