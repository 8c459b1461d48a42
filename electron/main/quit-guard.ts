import { dialog, type BrowserWindow } from 'electron';
import type { AppService } from '../core/app-service.js';

/**
 * Closing the window (or quitting) mid-flash asks first. Stopping cancels the helper and waits for
 * it to close the device, so the drive is left blank-headed rather than half written and bootable.
 */
export function guardQuitDuringFlash(window: BrowserWindow, service: AppService): void {
  let confirmed = false;
  window.on('close', (event) => {
    if (confirmed || !service.isFlashing()) return;
    event.preventDefault();
    const choice = dialog.showMessageBoxSync(window, {
      type: 'warning',
      title: 'A flash is running',
      message: 'Stop writing and quit?',
      detail: 'The drive will be incomplete and must be flashed again before it can be used.',
      buttons: ['Keep flashing', 'Stop and quit'],
      defaultId: 0,
      cancelId: 0,
    });
    if (choice !== 1) return;
    confirmed = true;
    void service.cancelFlashAndWait().then(() => window.close());
  });
}
