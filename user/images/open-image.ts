import { closeFd, fstatFd, openFd, readFully } from '../../node/io.js';
import { detectFormat, SNIFF_BYTES, type ImageFormat } from './detect-format.js';
import { errorText } from '../../common/domain/error-details.js';

/** An image file opened with the invoking user's rights. */
export interface OpenedImage {
  path: string;
  fd: number;
  format: ImageFormat;
  /** Size of the file itself. */
  fileSize: number;
  close(): Promise<void>;
}

export class ImageError extends Error {
  constructor(
    readonly code: 'not-found' | 'not-a-file' | 'unreadable' | 'empty',
    message: string,
  ) {
    super(message);
  }
}

/** Opens `path` read-only, as the current user, and sniffs its format. */
export async function openImage(path: string): Promise<OpenedImage> {
  let fd: number;
  try {
    fd = await openFd(path, 0);
  } catch (error) {
    const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : '';
    if (code === 'ENOENT') throw new ImageError('not-found', `${path}: no such file.`);
    throw new ImageError('unreadable', `${path} cannot be read: ${errorText(error)}`);
  }
  try {
    const st = await fstatFd(fd);
    if (!st.isFile()) throw new ImageError('not-a-file', `${path} is not an image file.`);
    if (st.size === 0) throw new ImageError('empty', `${path} is empty (0 bytes): was the download interrupted?`);
    const head = Buffer.alloc(Math.min(SNIFF_BYTES, st.size));
    await readFully(fd, head, 0, head.length, 0);
    const trailer = Buffer.alloc(Math.min(SNIFF_BYTES, st.size));
    await readFully(fd, trailer, 0, trailer.length, st.size - trailer.length);
    return { path, fd, format: detectFormat(head, st.size >= SNIFF_BYTES ? trailer : null), fileSize: st.size, close: () => closeFd(fd) };
  } catch (error) {
    await closeFd(fd);
    throw error;
  }
}
