/**
 * Reads a small file that comes with an image (IMAGE.sha256, SHA256SUMS, IMAGE.bmap), bounded by
 * what such a file can be rather than by what is there: `readFile` on one that was a symbolic link
 * to /dev/zero read until memory ran out (13 GB in 30 s), and one that was a FIFO waited forever.
 * So it opens without waiting for a writer, takes what the open descriptor shows to be a regular
 * file only, and reads no more than `limit` bytes. A link to a regular file is followed: sidecars
 * are often links (latest.img.bmap -> 2024-11.img.bmap), and the descriptor's own fstat is what
 * keeps a device or a FIFO out, wherever a link leads.
 */
import { jobError, JobError } from '../../../common/domain/failure.js';
import { errorText } from '../../../common/domain/error-details.js';
import { closeFd, fileKind, fstatFd, openFd, READ_WITHOUT_WAITING, readFully } from '../../../node/io.js';

/**
 * The contents of `path`, or null when there is no such file. `what` names it in messages ("The
 * block map /x/os.img.bmap"). Anything else that is not a regular file of at most `limit` bytes
 * is an error: a checksum or block map that is there but cannot be used must not be passed over.
 */
export async function readSidecar(path: string, limit: number, what: string): Promise<Buffer | null> {
  let fd: number;
  try {
    fd = await openFd(path, READ_WITHOUT_WAITING);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    throw jobError('source-read-error', `${what} cannot be read: ${errorText(error)}.`);
  }
  try {
    const stats = await fstatFd(fd);
    if (!stats.isFile()) throw jobError('source-read-error', `${what} is ${fileKind(stats)}, not a regular file.`);
    if (stats.size > limit)
      throw jobError('source-corrupt', `${what} is ${stats.size} bytes, too large to be one (at most ${limit}).`);
    // One byte more than the file had: a file still growing shows, and still stops at the limit.
    const buffer = Buffer.alloc(Math.min(stats.size, limit) + 1);
    const got = await readFully(fd, buffer, 0, buffer.length, 0);
    if (got > limit) throw jobError('source-corrupt', `${what} is larger than ${limit} bytes, too large to be one.`);
    return buffer.subarray(0, got);
  } catch (error) {
    if (error instanceof JobError) throw error;
    throw jobError('source-read-error', `${what} cannot be read: ${errorText(error)}.`);
  } finally {
    await closeFd(fd);
  }
}
