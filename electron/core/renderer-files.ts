import { extname, resolve, sep } from 'node:path';
import { CONTENT_SECURITY_POLICY } from './security.js';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/**
 * The built renderer file a request path names, or null. Only files inside `root` with a known
 * type are served: no directory listings, no `..`, no encoded escapes out of the folder.
 */
export function resolveRendererFile(root: string, pathname: string): { path: string; contentType: string } | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return null;
  }
  if (decoded.includes('\0')) return null;
  const relative = decoded === '/' || decoded === '' ? 'index.html' : decoded.replace(/^\/+/, '');
  const base = resolve(root);
  const path = resolve(base, relative);
  if (!path.startsWith(base + sep)) return null;
  const contentType = CONTENT_TYPES[extname(path)];
  return contentType === undefined ? null : { path, contentType };
}

/** Headers for every renderer response: the CSP travels with the page, whichever transport serves it. */
export function rendererHeaders(contentType: string): Record<string, string> {
  return {
    'content-type': contentType,
    'content-security-policy': CONTENT_SECURITY_POLICY,
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
  };
}
