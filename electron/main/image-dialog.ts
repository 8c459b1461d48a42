import { dialog, type BrowserWindow } from 'electron';

/**
 * Extensions the open dialog offers. The format is detected from the content afterwards; formats
 * this build cannot write yet are named and refused on the image step, not hidden here.
 */
const IMAGE_EXTENSIONS = ['img', 'iso', 'raw', 'bin', 'wic', 'sdcard', 'gz', 'xz', 'bz2', 'zst', 'zip', 'qcow2', 'dmg'];

export async function pickImageWithDialog(window: BrowserWindow): Promise<string | null> {
  const result = await dialog.showOpenDialog(window, {
    title: 'Choose an image',
    properties: ['openFile'],
    filters: [
      { name: 'Disk images', extensions: IMAGE_EXTENSIONS },
      { name: 'All files', extensions: ['*'] },
    ],
  });
  return result.canceled ? null : (result.filePaths[0] ?? null);
}
