import { spawn } from 'node:child_process';
import { constants, copyFile } from 'node:fs';
import { lstat, realpath, rename, stat, unlink } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { getSystemErrorMessage } from 'node:util';
import { formatBytes } from '../../common/domain/units.js';
import { alignUp } from '../../writer/job-memory.js';
import { JobError, jobError, toFailure } from '../../common/domain/failure.js';
import { closeFd, fstatFd, openFd, readFully, syncData, writeFully } from '../../node/io.js';
import { readFromDisk } from './darwin-uncached.js';
import type { WriteTarget } from '../../writer/write-target.js';
import { UV_FS_O_DIRECT } from '../../writer/platform/win32.js';
import { errorCode, errorText } from '../../common/domain/error-details.js';
import type { Extent } from '../../common/domain/extents.js';
import type { TargetResult } from '../../common/domain/result.js';
import { dataRanges } from './file-data-ranges.js';

/**
 * Read-back requests of a file are laid out in pages: O_DIRECT on Linux filesystems wants at
 * most the page size, and a short read at the end of the file is just the file ending.
 */
const FILE_BLOCK = 4096;

/** The suffix a file carries while it is written and verified; only a good result loses it. */
export const INCOMPLETE_SUFFIX = '.incomplete';

/**
 * Runs a tool on an open descriptor, handed over as its stdin and named /dev/stdin: the tool
 * reopens that very file through /proc, so no path can be swapped in between.
 */
function runOnDescriptor(tool: string, args: readonly string[], fd: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(tool, args, { stdio: [fd, 'ignore', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`${tool} ${args.join(' ')}: ${stderr.trim() || `exit code ${String(code)}`}`)),
    );
  });
}

/**
 * Reserves `bytes` for the file up front with fallocate(1) (Node has no fallocate): a disk
 * without room says so before anything is written, and ext4 lays the file out in long extents.
 * Filesystems without fallocate just grow the file as it is written.
 */
async function reserve(fd: number, path: string, bytes: number): Promise<void> {
  try {
    await runOnDescriptor('fallocate', ['--length', String(bytes), '/dev/stdin'], fd);
  } catch (error) {
    const text = errorText(error);
    if (/No space left/i.test(text))
      throw jobError(
        'target-full',
        `There is not enough free space for ${path}: it needs ${formatBytes(bytes)} (${bytes} bytes). Free some space or choose another place.`,
        { offset: 0 },
      );
    // Not supported here (or no fallocate tool): the file grows as it is written.
  }
}

/**
 * Whether a missing `path` would be a name among the system's devices: anything under /dev but
 * /dev/shm (an ordinary tmpfs for files), its folder's links resolved. There a name that does not
 * exist is a drive that is gone (/dev/sdb unplugged, /dev/mapper/card never opened), never a file
 * to create. The folder's filesystem cannot tell: statfs reports devtmpfs as plain tmpfs (measured
 * here), and /dev may be an ordinary tmpfs that udev fills.
 */
async function isDeviceName(path: string): Promise<boolean> {
  const full = resolve(path);
  const folder = await realpath(dirname(full)).catch(() => dirname(full));
  const under = (dir: string) => folder === dir || folder.startsWith(`${dir}/`);
  return under('/dev') && !under('/dev/shm');
}

/**
 * Where a file target may be written, checked on the path itself: a new file, or a regular file
 * that is replaced. A name in /dev that does not exist is a drive that is gone, not a file to
 * create; a symbolic link is refused rather than followed, so it can never lead to a disk.
 */
export async function checkFileTargetPath(path: string): Promise<void> {
  const st = await lstat(path).catch((error: unknown) => {
    const code = errorCode(error);
    if (code === 'ENOENT') return null;
    if (code === 'EACCES' || code === 'EPERM')
      throw jobError(
        'permission-denied',
        `No permission to reach ${path}: a folder on its way may not be entered (permission denied). Choose a folder you can write to.`,
      );
    throw jobError('target-not-found', `${path} cannot be examined: ${errorText(error)}`);
  });
  if (st === null) {
    if (await isDeviceName(path))
      throw jobError('target-not-found', `${path} does not exist: was the drive unplugged?`);
    return;
  }
  if (st.isSymbolicLink())
    throw jobError('target-not-block-device', `${path} is a symbolic link. Name the drive or the file itself.`);
  if (!st.isFile())
    throw jobError(
      'target-not-block-device',
      `${path} is neither a disk nor a regular file; Sluice writes only to those.`,
    );
}

/**
 * A regular file as a flash target ("decompress to file", a raw copy, a backup). It is written
 * as `PATH.incomplete`, created afresh (never following a link), and renamed to PATH only once it
 * was written and verified: a failed or cancelled job leaves no file under the name asked for.
 * No privileges are involved: it is written with the rights of whoever runs the job.
 */
/**
 * The open flag that reads a file past the cache, per OS: O_DIRECT on Linux; on Windows libuv's
 * UV_FS_O_DIRECT (FILE_FLAG_NO_BUFFERING). Node names O_DIRECT only on Linux: elsewhere
 * constants.O_DIRECT is undefined, which an OR turned into no flag at all, so Windows verified a
 * file from its cache. macOS has no such flag: null, and uncachedReader drops the cached pages
 * and sets F_NOCACHE instead.
 */
export function directReadFlag(platform: NodeJS.Platform = process.platform): number | null {
  if (platform === 'win32') return UV_FS_O_DIRECT;
  return platform === 'linux' ? constants.O_DIRECT : null;
}

export class FileTarget implements WriteTarget {
  readonly blockSize = FILE_BLOCK;
  readonly optimalIoSize = 0;
  readonly capacity = null;
  private readBack: number | null = null;
  private closed = false;
  private committed = false;

  private constructor(
    readonly path: string,
    private readonly partial: string,
    private readonly fd: number,
  ) {}

  /** The name the file has until it is committed. */
  static partialPath(path: string): string {
    return `${path}${INCOMPLETE_SUFFIX}`;
  }

  /**
   * Creates `PATH.incomplete` (a leftover from an earlier run is replaced). With `size` known
   * the space is reserved first; with `sparse` the file is only given that size, since a
   * block map's unmapped ranges are holes.
   */
  static async create(path: string, size: number | null, sparse: boolean): Promise<FileTarget> {
    await checkFileTargetPath(path);
    const partial = await FileTarget.fresh(path);
    const fd = await FileTarget.openPartial(path, partial, constants.O_CREAT | constants.O_EXCL);
    const target = new FileTarget(path, partial, fd);
    try {
      if (size !== null && sparse) await runOnDescriptor('truncate', ['--size', String(size), '/dev/stdin'], fd);
      else if (size !== null && size > 0) await reserve(fd, path, size);
    } catch (error) {
      throw withLeftover(error, await target.discard());
    }
    return target;
  }

  /**
   * Copies the raw image file at `source` into `PATH.incomplete` in the kernel (copy_file_range,
   * a reflink where the filesystem shares blocks), through libuv's copyfile: faster than a
   * read/write loop, since no byte passes through this process. `onCopied` is polled with the
   * bytes copied so far.
   */
  static async copyOf(source: string, path: string, onCopied: (bytes: number) => void): Promise<FileTarget> {
    await checkFileTargetPath(path);
    const partial = await FileTarget.fresh(path);
    const copying = new Promise<void>((resolve, reject) =>
      // EXCL: created afresh, never through a link someone put in its place.
      copyFile(source, partial, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE, (error) =>
        error ? reject(error) : resolve(),
      ),
    );
    // Progress only: the size the copy has reached so far.
    const poll = setInterval(
      () =>
        void stat(partial).then(
          (st) => onCopied(st.size),
          () => undefined,
        ),
      100,
    );
    try {
      await copying;
    } catch (error) {
      // EEXIST: something else made that name since; it is not ours to remove.
      const left = errorCode(error) === 'EEXIST' ? null : await removePartial(partial);
      throw withLeftover(fileWriteFailure(path, error), left);
    } finally {
      clearInterval(poll);
    }
    return new FileTarget(path, partial, await FileTarget.openPartial(path, partial, 0));
  }

  /** Removes a leftover `PATH.incomplete` (a link is removed, not followed) and returns its name. */
  private static async fresh(path: string): Promise<string> {
    const partial = FileTarget.partialPath(path);
    await unlink(partial).catch((error: unknown) => {
      if (errorCode(error) !== 'ENOENT')
        throw jobError('permission-denied', `${partial} is in the way and cannot be removed: ${errorText(error)}`);
    });
    return partial;
  }

  private static async openPartial(path: string, partial: string, flags: number): Promise<number> {
    try {
      return await openFd(partial, constants.O_RDWR | constants.O_NOFOLLOW | flags);
    } catch (error) {
      const code = errorCode(error);
      if (code === 'EACCES' || code === 'EPERM')
        throw jobError(
          'permission-denied',
          `No permission to create ${partial} (permission denied): choose a folder you can write to.`,
        );
      if (code === 'EROFS') throw jobError('target-read-only', `${path} is on a read-only filesystem.`);
      if (code === 'ENOENT') throw jobError('target-not-found', `The folder for ${path} does not exist.`);
      throw jobError('write-error', `Creating ${partial} failed: ${errorText(error)}`);
    }
  }

  async write(buffer: Buffer, offset: number, length: number, position: number): Promise<void> {
    // Buffered: a file ends where the image ends, which direct I/O could not write.
    await writeFully(this.fd, buffer, offset, length, position);
  }

  /** Reads the file back past the page cache: O_DIRECT where the filesystem allows it, else after dropping the file's cached pages. */
  async read(buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
    this.readBack ??= await this.openReadBack();
    const got = await readFully(this.readBack, buffer, offset, alignUp(length, FILE_BLOCK), position);
    return Math.min(got, length);
  }

  private async openReadBack(): Promise<number> {
    const direct = directReadFlag();
    if (direct !== null) {
      try {
        return await openFd(this.partial, constants.O_RDONLY | direct | constants.O_NOFOLLOW);
      } catch (error) {
        if (errorCode(error) !== 'EINVAL') throw error;
      }
    }
    return this.uncachedReader();
  }

  /** The file's length now. */
  async length(): Promise<number> {
    return (await fstatFd(this.fd)).size;
  }

  /** The ranges of [from, to) that hold data, as the file's filesystem says (file-data-ranges.ts); null where it cannot say. */
  dataRanges(from: number, to: number): Promise<Extent[] | null> {
    return dataRanges(this.fd, from, to);
  }

  /** The file's own descriptor, for a tool that writes it front to back from the start (a compressor). */
  get descriptor(): number {
    return this.fd;
  }

  /**
   * A plain read-only descriptor on the file, opened after its data was synced and its cached
   * pages dropped, so what is read comes from the disk: for a reader that cannot use direct I/O
   * (a decompressor), and on macOS, which has none. Linux: posix_fadvise DONTNEED, through dd since
   * Node cannot call it. macOS: msync(MS_INVALIDATE) and F_NOCACHE (darwin-uncached.ts).
   */
  async uncachedReader(): Promise<number> {
    await syncData(this.fd);
    if (process.platform !== 'darwin') {
      await runOnDescriptor('dd', ['iflag=nocache', 'count=0', 'status=none'], this.fd).catch(() => undefined);
      return openFd(this.partial, constants.O_RDONLY | constants.O_NOFOLLOW);
    }
    const fd = await openFd(this.partial, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      await readFromDisk(fd, (await fstatFd(fd)).size);
    } catch (error) {
      await closeFd(fd);
      throw jobError('verify-read-error', `${this.path} cannot be read back past the cache: ${errorText(error)}`);
    }
    return fd;
  }

  sync(): Promise<void> {
    return syncData(this.fd);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const readBack = this.readBack;
    this.readBack = null;
    if (readBack !== null) await closeFd(readBack);
    await closeFd(this.fd);
  }

  /** Gives the verified file its name, replacing a regular file of that name (checked again now). */
  async commit(): Promise<void> {
    await checkFileTargetPath(this.path);
    await rename(this.partial, this.path);
    this.committed = true;
  }

  /**
   * Removes the partial file: nothing of a failed or cancelled job stays behind. Null once it is
   * gone; otherwise the sentence that says it is still there (its disk pulled or read-only).
   */
  async discard(): Promise<string | null> {
    await this.close().catch(() => undefined);
    // A step after the commit failed: the file is whole, verified and named; it stays.
    if (this.committed) return `${this.path} itself was saved whole and verified, and is kept.`;
    return removePartial(this.partial);
  }
}

/** Removes the partial file `partial`: null once it is gone, else the sentence that says it is still there. */
export async function removePartial(partial: string): Promise<string | null> {
  try {
    await unlink(partial);
    return null;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return null;
    return `The incomplete file ${partial} could not be deleted (${systemErrorWords(error)}); delete it by hand.`;
  }
}

/** `error`, its message ending with `left` when the partial file is still there; its code and details kept. */
export function withLeftover(error: unknown, left: string | null): unknown {
  if (left === null) return error;
  const failure = toFailure(error);
  return new JobError({ ...failure, message: `${failure.message} ${left}` });
}

/**
 * `result` once its partial file was discarded, `left` saying when the file is still there: a
 * failure says so too, and a cancel that left it behind is no longer a clean one.
 */
export function discarded(result: Exclude<TargetResult, { status: 'ok' }>, left: string | null): TargetResult {
  if (left === null) return result;
  if (result.status === 'failed') return { ...result, message: `${result.message} ${left}` };
  const { target, bytes } = result;
  return { status: 'failed', target, bytes, code: 'write-error', message: `Cancelled. ${left}` };
}

/** A system error in words ("operation not permitted"), without the call and path Node adds. */
function systemErrorWords(error: unknown): string {
  const errno = typeof error === 'object' && error !== null && 'errno' in error ? error.errno : null;
  return typeof errno === 'number' ? getSystemErrorMessage(errno) : errorText(error);
}

/** A failed write to a file, in words. */
export function fileWriteFailure(path: string, error: unknown): Error {
  if (error instanceof JobError) return error;
  const code = errorCode(error);
  if (code === 'ENOSPC')
    return jobError('target-full', `The disk holding ${path} is full. Free some space or choose another place.`);
  if (code === 'EACCES' || code === 'EPERM') return jobError('permission-denied', `No permission to write ${path}.`);
  return jobError('write-error', `Writing ${path} failed: ${errorText(error)}`);
}
