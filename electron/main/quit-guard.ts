import { dialog, type BrowserWindow } from 'electron';
import type { AppService } from '../core/app-service.js';

/** What stopping costs, said plainly: a half-written drive (a flash, a clone, an erase), only the backup file, or nothing (a check puts back what it tested; a comparison only reads). */
const QUESTION: Readonly<
  Record<'write' | 'backup' | 'check' | 'verify', { title: string; message: string; detail: string; keep: string }>
> = {
  write: {
    title: 'A flash is running',
    message: 'Stop writing and quit?',
    detail: 'The drive will be incomplete and must be flashed again before it can be used.',
    keep: 'Keep flashing',
  },
  backup: {
    title: 'A backup is running',
    message: 'Stop the backup and quit?',
    detail: 'The drive is left as it was; the incomplete backup file is deleted.',
    keep: 'Keep backing up',
  },
  check: {
    title: 'A card is being checked',
    message: 'Stop the check and quit?',
    detail: 'Every block tested so far is put back first.',
    keep: 'Keep checking',
  },
  verify: {
    title: 'A drive is being compared with an image',
    message: 'Stop comparing and quit?',
    detail: 'Nothing was written to the drive.',
    keep: 'Keep comparing',
  },
};

/**
 * Closing the window (or quitting) mid-job asks first. Stopping cancels the helper and waits for
 * it to close the device, so a drive being flashed is left blank-headed rather than half written
 * and bootable.
 */
export function guardQuitDuringJob(window: BrowserWindow, service: AppService): void {
  let confirmed = false;
  window.on('close', (event) => {
    const running = service.runningJob();
    if (confirmed || running === null) return;
    event.preventDefault();
    const question = QUESTION[running === 'backup' || running === 'check' || running === 'verify' ? running : 'write'];
    const choice = dialog.showMessageBoxSync(window, {
      type: 'warning',
      title: question.title,
      message: question.message,
      detail: question.detail,
      buttons: [question.keep, 'Stop and quit'],
      defaultId: 0,
      cancelId: 0,
    });
    if (choice !== 1) return;
    confirmed = true;
    void service.cancelJobAndWait().then(() => window.close());
  });
}
