import { readFile } from 'node:fs/promises';
import { protocol } from 'electron';
import { isCatalogueIconPath, readCatalogueIcon } from '../core/catalogue-icons.js';
import { rendererHeaders, resolveRendererFile } from '../core/renderer-files.js';
import { APP_HOST, APP_SCHEME } from '../core/security.js';

/** Serves the built renderer at app://sluice/, and the catalogue's icons from `iconsDir`, with the CSP on every response. */
export function registerAppProtocol(root: string, iconsDir: string): void {
  protocol.handle(APP_SCHEME, async (request) => {
    const url = new URL(request.url);
    if (url.host === APP_HOST && isCatalogueIconPath(url.pathname)) {
      const icon = await readCatalogueIcon(iconsDir, url.pathname);
      return icon === null
        ? new Response('Not found', { status: 404 })
        : new Response(new Uint8Array(icon.bytes), { headers: rendererHeaders(icon.contentType) });
    }
    const file = url.host === APP_HOST ? resolveRendererFile(root, url.pathname) : null;
    if (file === null) return new Response('Not found', { status: 404 });
    try {
      return new Response(await readFile(file.path), { headers: rendererHeaders(file.contentType) });
    } catch {
      return new Response('Not found', { status: 404 });
    }
  });
}
