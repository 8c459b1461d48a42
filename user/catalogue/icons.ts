/**
 * Fetches the icons of a catalogue's entries and boards into the cache (in the catalogue process,
 * for the app), each bounded to MAX_ICON_BYTES and kept only when it is an image (icon-files.ts),
 * so that the window shows them from the app's own origin and no remote content reaches it; they
 * stay for offline use. An icon that cannot be had is left out: the entry shows without it.
 */
import { mkdir, rename, stat, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { CatalogueDocument, CatalogueItem } from '../../common/domain/catalogue.js';
import { AddressRefusedError, readBoundedDownload } from '../images/http/http-source.js';
import { readSidecar } from '../images/files/sidecar-file.js';
import { iconFileName, iconType, MAX_ICON_BYTES } from './icon-files.js';

/** An icon server gets this long; the list shows without the icons it did not send. */
const ICON_TIMEOUT_MS = 10_000;
/** Icons fetched at once. */
const PARALLEL = 8;

function iconsOf(items: readonly CatalogueItem[]): string[] {
  return items.flatMap((item) => [
    ...(item.icon === null ? [] : [item.icon]),
    ...(item.kind === 'category' && item.items !== null ? iconsOf(item.items) : []),
  ]);
}

async function fetchIcon(url: string, dir: string, publicOnly: string | undefined): Promise<void> {
  const file = join(dir, iconFileName(url));
  if ((await stat(file).catch(() => null)) !== null) return;
  // file: icons come only from a local catalogue (os-list.ts refuses them from a server).
  const bytes = url.startsWith('file:')
    ? await readSidecar(fileURLToPath(url), MAX_ICON_BYTES, `The icon ${url}`)
    : await readBoundedDownload(url, MAX_ICON_BYTES, ICON_TIMEOUT_MS, { publicOnly });
  if (bytes === null || iconType(bytes) === null) return;
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, bytes);
  await rename(temporary, file);
}

/**
 * Fetches every icon `document` names that `dir` does not hold yet (with `publicOnly`, only from
 * the internet: see HttpOptions). Returns a note for each icon refused for its address, which the
 * person should hear of; one that merely failed is left out without a word.
 */
export async function fetchIcons(
  document: CatalogueDocument,
  dir: string,
  publicOnly: string | undefined,
): Promise<string[]> {
  const urls = [
    ...new Set([...iconsOf(document.items), ...document.boards.flatMap((b) => (b.icon === null ? [] : [b.icon]))]),
  ];
  // Notes keep the catalogue's order, whichever fetch settles first.
  const noteFor = (url: string) =>
    fetchIcon(url, dir, publicOnly).then(
      () => null,
      (error: unknown) =>
        error instanceof AddressRefusedError ? `${document.source}: icon not fetched: ${error.message}` : null,
    );
  await mkdir(dir, { recursive: true });
  const notes: (string | null)[] = [];
  for (let i = 0; i < urls.length; i += PARALLEL)
    notes.push(...(await Promise.all(urls.slice(i, i + PARALLEL).map(noteFor))));
  return notes.filter((note) => note !== null);
}
