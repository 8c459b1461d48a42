import { join } from 'node:path';
import { app, dialog, type BrowserWindow } from 'electron';

/** The save dialog for a backup, in the user's Documents folder; the system asks before replacing a file. */
export async function pickBackupFileWithDialog(window: BrowserWindow, suggestedName: string): Promise<string | null> {
  const result = await dialog.showSaveDialog(window, {
    title: 'Save the backup as',
    defaultPath: join(app.getPath('documents'), suggestedName),
    buttonLabel: 'Back up',
    properties: ['createDirectory', 'showOverwriteConfirmation'],
  });
  return result.canceled || result.filePath === '' ? null : result.filePath;
}
