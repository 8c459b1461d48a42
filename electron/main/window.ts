import { app, BrowserWindow, nativeTheme, session, shell, type WebContents } from 'electron';
import { isAllowedExternalUrl } from '../../common/app/links.js';
import { mainWindowOptions } from '../core/security.js';

/**
 * Rules for every web page the app creates: no navigation away from the app, no new windows
 * (our own https links go to the browser instead), no <webview>, no permissions.
 */
export function lockDownWebContents(contents: WebContents): void {
  contents.on('will-navigate', (event) => event.preventDefault());
  contents.on('will-redirect', (event) => event.preventDefault());
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(({ url }) => {
    if (isAllowedExternalUrl(url)) void shell.openExternal(url);
    return { action: 'deny' };
  });
}

export function denyAllPermissions(): void {
  session.defaultSession.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  session.defaultSession.setPermissionCheckHandler(() => false);
}

export function createMainWindow(preloadPath: string): BrowserWindow {
  const window = new BrowserWindow({
    ...mainWindowOptions(preloadPath, !app.isPackaged),
    // The page's own background, so the window does not flash white before it paints in dark mode.
    backgroundColor: nativeTheme.shouldUseDarkColors ? '#15171c' : '#f5f6f8',
  });
  window.once('ready-to-show', () => window.show());
  return window;
}
