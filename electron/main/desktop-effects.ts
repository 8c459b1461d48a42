import { Notification, powerSaveBlocker, type BrowserWindow } from 'electron';
import type { DesktopEffects } from '../core/desktop-job.js';

/** Keep-awake, taskbar/dock progress and notifications, for electron/core/desktop-job.ts. */
export function electronDesktopEffects(window: BrowserWindow): DesktopEffects {
  return {
    preventSleep: () => {
      // Suspending mid-write can cut a USB drive's power and leave it half written.
      const id = powerSaveBlocker.start('prevent-app-suspension');
      return () => powerSaveBlocker.stop(id);
    },
    setProgress: (fraction) => {
      if (!window.isDestroyed()) window.setProgressBar(fraction ?? -1);
    },
    notify: (title, body) => {
      if (Notification.isSupported()) new Notification({ title, body }).show();
    },
  };
}
