import { watch } from 'node:fs';
import type { BrowserWindow } from 'electron';

/** How long the renderer build must be quiet before the window reloads: one rebuild writes several files. */
const SETTLE_MS = 300;

/** `npm run dev`: reloads the window whenever Vite rewrites the built renderer. */
export function reloadOnRendererRebuild(uiDir: string, window: BrowserWindow): void {
  let timer: NodeJS.Timeout | undefined;
  const watcher = watch(uiDir, { recursive: true }, () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (!window.isDestroyed()) window.webContents.reloadIgnoringCache();
    }, SETTLE_MS);
  });
  window.on('closed', () => watcher.close());
}
