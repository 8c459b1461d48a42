/**
 * Serves a catalogue icon to the window from the app's own origin (`/catalogue-icon/<sha256>`):
 * the file the catalogue process kept (user/catalogue/icons.ts), checked again here as it is read,
 * since the cache folder is the user's and anything may have been put there: a name that is a
 * SHA-256 and nothing else, a regular file of at most MAX_ICON_BYTES, and the signature of an
 * image type a page shows without running anything. Its type is the one its bytes say.
 */
import { join } from 'node:path';
import { CATALOGUE_ICON_PATH } from '../../common/contracts/catalogue-view.js';
import { iconType, MAX_ICON_BYTES } from '../../user/catalogue/icon-files.js';
import { readSidecar } from '../../user/images/files/sidecar-file.js';

/** Whether a request path is one of the catalogue icons' (the renderer's files are served otherwise). */
export function isCatalogueIconPath(pathname: string): boolean {
  return pathname.startsWith(CATALOGUE_ICON_PATH);
}

/** The icon `pathname` names in `iconsDir`, with its type; null when there is no such icon or it is not a safe image. */
export async function readCatalogueIcon(
  iconsDir: string,
  pathname: string,
): Promise<{ bytes: Buffer; contentType: string } | null> {
  const name = pathname.slice(CATALOGUE_ICON_PATH.length);
  if (!/^[0-9a-f]{64}$/.test(name)) return null;
  const bytes = await readSidecar(join(iconsDir, name), MAX_ICON_BYTES, 'A catalogue icon').catch(() => null);
  const contentType = bytes === null ? null : iconType(bytes);
  return bytes === null || contentType === null ? null : { bytes, contentType };
}
