import { basename } from 'node:path';
import { MAX_CHECKSUM_FILE_BYTES, type ChecksumList } from '../files/checksums.js';
import { readSmallDownload } from './http-source.js';

/** The file name at the end of a URL's path, as a checksum list would write it (%20 as a space). */
function fileName(url: URL): string {
  const name = basename(url.pathname);
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

/**
 * URL.sha256, then SHA256SUMS in the same folder, for each of `urls` in turn: the download's
 * final address first (a "latest" link redirects to the dated file the lists name), then the
 * address as typed (a release page's link redirects to a storage address of no use here). All
 * are fetched at once, each small and bounded (see readSmallDownload), and read in that order.
 */
export function listsBesideUrl(urls: readonly string[]): ChecksumList[] {
  const texts = new Map<string, Promise<string | null>>();
  const fetchOnce = (list: string) => {
    let text = texts.get(list);
    if (text === undefined) {
      text = readSmallDownload(list, MAX_CHECKSUM_FILE_BYTES);
      texts.set(list, text);
    }
    return text;
  };
  return [...new Set(urls)].flatMap((address) => {
    const url = new URL(address);
    url.search = '';
    url.hash = '';
    const name = fileName(url);
    if (name === '') return [];
    const own = new URL(url);
    own.pathname += '.sha256';
    return [own.href, new URL('SHA256SUMS', url).href].map((list) => {
      const text = fetchOnce(list);
      return { from: list, name, read: () => text };
    });
  });
}
