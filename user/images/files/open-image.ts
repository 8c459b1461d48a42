import { jobError, JobError } from '../../../common/domain/failure.js';
import { errorCode, errorText } from '../../../common/domain/error-details.js';
import { closeFd, fileKind, fstatFd, openFd, READ_WITHOUT_WAITING, readFully } from '../../../node/io.js';
import { detectFormat, SNIFF_BYTES, type ImageFormat } from '../formats/detect-format.js';

/** What identifies an image file, so a flash can tell that it changed after it was chosen. */
export interface FileIdentity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

/** An image file opened with the invoking user's rights. */
export interface OpenedImage {
  path: string;
  fd: number;
  format: ImageFormat;
  /** Size of the file itself. */
  fileSize: number;
  /** The file as it was opened (fstat of the descriptor, so no other file can have been looked at). */
  identity: FileIdentity;
  close(): Promise<void>;
}

/**
 * Opens `path` read-only, as the current user, and sniffs its format; a FIFO or a device is
 * refused at once, without waiting for a writer or reading it. Throws a JobError:
 * source-not-found for a path with no file, source-read-error for one that cannot be read, is not
 * a file, or is empty.
 */
export async function openImage(path: string): Promise<OpenedImage> {
  let fd: number;
  try {
    fd = await openFd(path, READ_WITHOUT_WAITING);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') throw jobError('source-not-found', `${path}: no such file.`);
    throw jobError('source-read-error', `${path} cannot be read: ${errorText(error)}`);
  }
  try {
    const st = await fstatFd(fd);
    if (!st.isFile()) throw jobError('source-read-error', `${path} is ${fileKind(st)}, not an image file.`);
    if (st.size === 0) throw jobError('source-read-error', `${path} is empty (0 bytes): was the download interrupted?`);
    const head = Buffer.alloc(Math.min(SNIFF_BYTES, st.size));
    await readFully(fd, head, 0, head.length, 0);
    const trailer = Buffer.alloc(Math.min(SNIFF_BYTES, st.size));
    await readFully(fd, trailer, 0, trailer.length, st.size - trailer.length);
    return {
      path,
      fd,
      format: detectFormat(head, st.size >= SNIFF_BYTES ? trailer : null),
      fileSize: st.size,
      identity: { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs },
      close: () => closeFd(fd),
    };
  } catch (error) {
    await closeFd(fd);
    if (error instanceof JobError) throw error;
    throw jobError('source-read-error', `${path} cannot be read: ${errorText(error)}`);
  }
}
