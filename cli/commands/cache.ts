import { formatBytes } from '../../common/domain/units.js';
import { imageCache } from '../catalogue.js';
import { EXIT } from '../exit-codes.js';

/** "2026-11-24 04:34" in UTC, as the cache's times are shown. */
function when(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').slice(0, 16);
}

/** `sluice cache list [--json]`: the images kept, the most recently used first. */
export async function cacheListCommand(json: boolean): Promise<number> {
  const cache = imageCache();
  const entries = await cache.entries();
  const total = entries.reduce((sum, e) => sum + e.bytes, 0);
  if (json) {
    process.stdout.write(
      `${JSON.stringify({ dir: cache.dir, bytes: total, limitBytes: cache.limitBytes, entries })}\n`,
    );
    return EXIT.ok;
  }
  process.stdout.write(`Image cache: ${cache.dir}\n`);
  if (entries.length === 0) {
    process.stdout.write('It holds no images.\n');
    return EXIT.ok;
  }
  for (const e of entries) {
    const state = e.complete
      ? 'complete'
      : `partial, ${e.size === null ? 'size unknown' : `${Math.floor((100 * e.bytes) / Math.max(1, e.size))}% of ${formatBytes(e.size)}`}`;
    process.stdout.write(
      `  ${e.key.slice(0, 12)}  ${(e.name ?? '(no description)').padEnd(32)}  ${formatBytes(e.bytes).padStart(8)}  ${state}, last used ${when(e.lastUsed)} UTC\n`,
    );
  }
  process.stdout.write(
    `${entries.length} images, ${formatBytes(total)} of at most ${formatBytes(cache.limitBytes)}.\n`,
  );
  return EXIT.ok;
}

/** `sluice cache clear [--json]`: deletes every image the cache holds (saved catalogues stay, for offline lists). */
export async function cacheClearCommand(json: boolean): Promise<number> {
  const cache = imageCache();
  const removed = await cache.clear();
  if (json)
    process.stdout.write(`${JSON.stringify({ dir: cache.dir, removed: removed.entries, bytes: removed.bytes })}\n`);
  else process.stdout.write(`Removed ${removed.entries} images (${formatBytes(removed.bytes)}) from ${cache.dir}.\n`);
  return EXIT.ok;
}
