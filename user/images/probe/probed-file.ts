import { jobError } from '../../../common/domain/failure.js';
import { errorCode, errorText } from '../../../common/domain/error-details.js';
import { closeFd, fileKind, fstatFd, openFd, READ_WITHOUT_WAITING } from '../../../node/io.js';
import type { FileIdentity } from '../files/open-image.js';

/** Whether two looks at a file saw the same file, unchanged. */
export function sameFile(a: FileIdentity, b: FileIdentity): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

/**
 * Opens the image file the probe examined, for the helper to read as its fd 0 (a raw image), and
 * checks that it is still that file (`opened`: the file opened before the probe ended, checked
 * the same way, and closed if it fails them). The probe ran as the user (image-child.ts); under sudo this
 * process is root, so a file swapped in after the probe (a link to one only root may read) is
 * refused here rather than handed over.
 */
export async function openProbedFile(path: string, identity: FileIdentity, opened?: number): Promise<number> {
  let fd: number;
  try {
    fd = opened ?? (await openFd(path, READ_WITHOUT_WAITING));
  } catch (error) {
    if (errorCode(error) === 'ENOENT')
      throw jobError('source-not-found', `${path}: no such file (it was there when it was examined).`);
    throw jobError('source-read-error', `${path} cannot be read: ${errorText(error)}`);
  }
  try {
    const st = await fstatFd(fd);
    if (!st.isFile()) throw jobError('source-read-error', `${path} is ${fileKind(st)}, not an image file.`);
    if (!sameFile(identity, { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs })) {
      throw jobError(
        'source-read-error',
        `${path} changed after it was examined (it was replaced or modified). Nothing was written; run the command again.`,
      );
    }
    return fd;
  } catch (error) {
    await closeFd(fd);
    throw error;
  }
}
