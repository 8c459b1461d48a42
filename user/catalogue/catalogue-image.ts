/**
 * A catalogue entry made ready to flash, for the CLI and the app alike: from the image cache when
 * it holds the entry (no network needed), else downloaded while it is written and kept in the
 * cache at the same time (the decoder appends what it reads to the cache's partial file:
 * user/images/http/download.ts). Either way it is probed like any image (user/images/processes/probe-launch.ts)
 * and checked against every SHA-256 the catalogue states: the download's as it is read, and the
 * decompressed image's (extract_sha256) as it is decoded, from the cache as from the network. A
 * cached download is kept by its download's checksum, which another catalogue (or a changed
 * entry) may pair with another image checksum: what the cache checked when it kept it is no proof.
 */
import { cacheKey, type CatalogueOs } from '../../common/domain/catalogue.js';
import { JobError, type FailureCode } from '../../common/domain/failure.js';
import { isUrl } from '../../common/domain/image.js';
import type { TargetResult } from '../../common/domain/result.js';
import type { Customisation } from '../../common/domain/customisation.js';
import type { CachedImage, CacheChecks, ImageCache } from '../cache/image-cache.js';
import type { PreparedImage } from '../images/probe/probe.js';
import { prepareImageInChild } from '../images/processes/probe-launch.js';

export interface CatalogueImage {
  prepared: PreparedImage;
  /**
   * 'cache': read from the image cache, nothing downloaded. 'download': downloaded while it is
   * written, and kept when `cached` says so. 'file': the entry names a local file (a manifest of
   * images on this computer).
   */
  from: 'cache' | 'download' | 'file';
  /** Whether the download is saved into the cache as it is read. */
  cached: boolean;
  /** What the person flashing should know about the cache: why a download is not kept, what was evicted for it. */
  notes: string[];
  /** After the flash: a cached download that failed its checksum is removed, so the next try downloads it again. */
  settle(results: readonly TargetResult[]): Promise<void>;
}

export interface CatalogueImageOptions {
  cache: ImageCache | null;
  /**
   * false: a download is not saved into the cache, and nothing is evicted for it (the app looks at
   * an entry when it is chosen, and keeps it when it is flashed). Default true.
   */
  keep?: boolean;
  systemTools: boolean;
  partitions: boolean;
  /**
   * Each card's settings, in target order: the probe plans what customising writes onto each, by
   * the method the entry's init_format chooses where the image's contents cannot tell (user/customise/detect.ts).
   */
  customise?: Customisation[] | undefined;
}

/** What a cached file that fails them is: damaged on disk, so it is removed rather than used again. */
const DAMAGED: ReadonlySet<FailureCode> = new Set<FailureCode>([
  'source-checksum-mismatch',
  'source-corrupt',
  'source-truncated',
]);

/** Where the catalogue's checksums are named in messages. */
const FROM_CATALOGUE = 'the catalogue (image_download_sha256)';

function evictedNote(evicted: readonly CachedImage[]): string[] {
  if (evicted.length === 0) return [];
  return [
    `To make room in the cache, removed the least recently used: ${evicted.map((e) => e.name ?? e.key).join(', ')}.`,
  ];
}

/** The probe's answer, with the catalogue's name for it and its checksums. */
function fromCatalogue(prepared: PreparedImage, os: CatalogueOs, imageSha256: string | null): PreparedImage {
  const { info, plan } = prepared;
  const checksum =
    info.checksum === null
      ? null
      : { ...info.checksum, from: os.downloadSha256 === null ? info.checksum.from : FROM_CATALOGUE };
  // The catalogue's extract_size says what the drive receives when the probe could not (a gzip download).
  const size = info.size ?? os.extractSize;
  return {
    ...prepared,
    info: { ...info, name: os.name, size, sizeExact: info.size === null ? true : info.sizeExact, checksum },
    plan: { ...plan, sha256From: checksum?.from ?? plan.sha256From, imageSha256 },
  };
}

/** Prepares `os` to be flashed; rejects with a JobError as the probe does (offline and not cached: the download's failure). */
export async function prepareCatalogueImage(os: CatalogueOs, options: CatalogueImageOptions): Promise<CatalogueImage> {
  const probe = (image: string) =>
    prepareImageInChild({
      image,
      sha256: os.downloadSha256 ?? undefined,
      systemTools: options.systemTools,
      partitions: options.partitions,
      customise: options.customise,
      initFormat: os.initFormat,
    });
  const none = async () => undefined;
  if (!isUrl(os.url))
    return {
      prepared: fromCatalogue(await probe(os.url), os, os.extractSha256),
      from: 'file',
      cached: false,
      notes: [],
      settle: none,
    };
  const checks: CacheChecks = os.downloadSha256 !== null ? 'download' : 'image';
  const key = cacheKey(os);
  const cache = options.cache;
  const hit = cache === null ? null : await cache.find(key);
  const notes: string[] = [];
  if (cache !== null && hit !== null) {
    try {
      const prepared = fromCatalogue(await probe(hit), os, os.extractSha256);
      return {
        prepared,
        from: 'cache',
        cached: true,
        notes,
        settle: async (results) => {
          if (results.some((r) => r.status === 'failed' && DAMAGED.has(r.code))) await cache.remove(key);
        },
      };
    } catch (error) {
      if (!(error instanceof JobError) || !DAMAGED.has(error.failure.code)) throw error;
      await cache.remove(key);
      notes.push(
        `The cached copy of ${os.name} is damaged (${error.message.replace(/\.$/, '')}); it was removed and is downloaded again.`,
      );
    }
  }
  const prepared = fromCatalogue(await probe(os.url), os, os.extractSha256);
  if (cache === null || options.keep === false)
    return { prepared, from: 'download', cached: false, notes, settle: none };
  const room = await cache.reserve({ key, name: os.name, url: os.url, size: os.downloadSize, checks });
  if ('refused' in room)
    return {
      prepared,
      from: 'download',
      cached: false,
      notes: [...notes, `${os.name} is downloaded without being kept in the cache: ${room.refused}.`],
      settle: none,
    };
  return {
    prepared: { ...prepared, plan: { ...prepared.plan, tee: room.tee } },
    from: 'download',
    cached: true,
    notes: [...notes, ...evictedNote(room.evicted)],
    settle: none,
  };
}
