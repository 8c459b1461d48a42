/**
 * The window's security settings and the rules for what may talk to the main process. Plain data
 * and pure checks, so a unit test under Node locks them (test/electron/core/security.test.ts).
 */
import type { BrowserWindowConstructorOptions } from 'electron';

/** The renderer is served from app://sluice/, never file://: a file:// page could read any local file. */
export const APP_SCHEME = 'app';
export const APP_HOST = 'sluice';
export const APP_ENTRY_URL = `${APP_SCHEME}://${APP_HOST}/index.html`;

/**
 * Scripts only from the app's own origin, no eval, no inline code, nothing loaded from anywhere
 * else. connect-src 'self' lets the browser test bridge reach its own origin; under Electron the
 * page talks only through the preload.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

export function mainWindowOptions(preloadPath: string, allowDevTools: boolean): BrowserWindowConstructorOptions {
  return {
    width: 960,
    height: 640,
    minWidth: 720,
    minHeight: 540,
    title: 'Sluice',
    show: false,
    webPreferences: {
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webviewTag: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      // A file dropped outside the page's drop handler would otherwise navigate the window to file://.
      navigateOnDragDrop: false,
      safeDialogs: true,
      spellcheck: false,
      devTools: allowDevTools,
    },
  };
}

/** A URL of the app's own pages. */
export function isAppUrl(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  // Node's URL reports origin "null" for schemes it does not know, so compare the parts.
  return (
    parsed.protocol === `${APP_SCHEME}:` && parsed.host === APP_HOST && parsed.username === '' && parsed.password === ''
  );
}

/** Who sent an IPC message: the frame's URL, and whether it is the window's top-level frame. */
export interface SenderFrame {
  url: string;
  isMainFrame: boolean;
}

/** Only the app's own top-level page may call the main process; an iframe or a foreign page may not. */
export function isTrustedSender(frame: SenderFrame | null): boolean {
  return frame !== null && frame.isMainFrame && isAppUrl(frame.url);
}
