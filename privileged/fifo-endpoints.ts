/**
 * The helper's side of the FIFO transport: opens the FIFOs the unprivileged app made.
 *
 * These are the only paths besides the target devices that the helper opens, and it opens them
 * as root, so each one is checked before and after opening:
 * - the directory is a real directory (not a symlink), owned by the user who asked for root
 *   (PKEXEC_UID / SUDO_UID when the elevation tool says who that is, never root), and closed to
 *   everyone else (mode 0700);
 * - each entry is a FIFO owned by that user and closed to others, opened with O_NOFOLLOW, and the
 *   descriptor's own fstat must show the same FIFO (same device and inode) as the lstat before.
 *   On Linux the image FIFO is opened so first with O_PATH, which opens neither end, and its ends
 *   are then opened through that checked descriptor (/proc/self/fd), never by name again.
 * A FIFO carries only what a process writes into it, so a swapped-in symlink or file is refused
 * before a byte moves: root never reads /etc/shadow into a USB stick, never writes progress frames
 * over a file, and never opens a device node or a system daemon's root-owned FIFO.
 */
import { constants, existsSync, lstat, type Stats } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { closeFd, fstatFd, openFd } from '../node/io.js';
import { openFifoUnlessStopped, RELEASE_WAIT_MS } from '../node/fifo-open.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { FIFO_NAMES } from '../common/contracts/helper-transport.js';
import type { HelperEndpoints } from './endpoints.js';
import { errorText } from '../common/domain/error-details.js';

/** sudo and pkexec keep the helper's stdin: the image file itself, or the decoder's pipe. */
const IMAGE_ON_STDIN = 0;

/** The channel directory or one of its FIFOs is not what the app should have made. */
export class ChannelPathError extends Error {}

function lstatPath(path: string): Promise<Stats> {
  return new Promise((resolve, reject) => lstat(path, (error, st) => (error ? reject(error) : resolve(st))));
}

/** The user the elevation tool says started it, or null when it does not say (osascript). */
function invokingUid(): number | null {
  const raw = process.env['PKEXEC_UID'] ?? process.env['SUDO_UID'];
  if (raw === undefined) return null;
  const uid = Number(raw);
  return Number.isSafeInteger(uid) ? uid : null;
}

function checkPrivate(path: string, st: Stats, owner: number): void {
  if (st.uid !== owner)
    throw new ChannelPathError(`${path} belongs to uid ${st.uid}, not to uid ${owner} who made the channel`);
  if ((st.mode & 0o077) !== 0)
    throw new ChannelPathError(`${path} can be opened by other users (mode ${(st.mode & 0o777).toString(8)})`);
}

/** Checks the channel directory and returns the uid that must own everything in it. */
export async function checkChannelDir(dir: string): Promise<number> {
  const st = await lstatPath(dir).catch((error: unknown) => {
    throw new ChannelPathError(`channel directory ${dir}: ${errorText(error)}`);
  });
  if (!st.isDirectory()) throw new ChannelPathError(`${dir} is not a directory`);
  if (st.uid === 0) throw new ChannelPathError(`${dir} belongs to root; the channel is made by the unprivileged app`);
  const invoker = invokingUid();
  if (invoker !== null && st.uid !== invoker)
    throw new ChannelPathError(`${dir} belongs to uid ${st.uid}, but uid ${invoker} asked for root`);
  checkPrivate(dir, st, st.uid);
  return st.uid;
}

/** Opens one FIFO of the channel directory with `flags`, after the checks above. */
export async function openChannelFifo(dir: string, name: string, owner: number, flags: number): Promise<number> {
  const path = join(dir, name);
  const before = await lstatPath(path).catch((error: unknown) => {
    throw new ChannelPathError(`${path}: ${errorText(error)}`);
  });
  if (!before.isFIFO()) throw new ChannelPathError(`${path} is not a FIFO`);
  checkPrivate(path, before, owner);
  const fd = await openFd(path, flags | constants.O_NOFOLLOW);
  const after = await fstatFd(fd);
  if (!after.isFIFO() || after.dev !== before.dev || after.ino !== before.ino) {
    await closeFd(fd);
    throw new ChannelPathError(`${path} was replaced while it was being opened`);
  }
  return fd;
}

/** Whether every one of `calls` settles within `ms`. */
async function settleWithin(calls: Promise<unknown>[], ms: number): Promise<boolean> {
  const timer = new AbortController();
  try {
    return await Promise.race([
      Promise.allSettled(calls).then(() => true),
      sleep(ms, false, { signal: timer.signal, ref: false }),
    ]);
  } finally {
    timer.abort();
  }
}

/**
 * Linux's O_PATH, which Node has no constant for: a descriptor naming an inode, opening no end of
 * it. This value holds on x86, ARM, RISC-V, PowerPC, MIPS and s390; not on alpha, parisc or sparc.
 */
const LINUX_O_PATH = 0o10000000;

const JOB_ENDED_FIRST = 'the job ended before the app opened the image stream';

/**
 * On Linux, a descriptor holding the image FIFO's inode (checked as openChannelFifo checks it),
 * which opens neither end and so returns at once; null elsewhere. Its job's open, and the stand-in
 * that calls that open off, both reach the FIFO through it (/proc/self/fd), so a release still
 * reaches the inode the open waits on once the app has removed or replaced the FIFO's name.
 */
async function fifoInode(dir: string, owner: number): Promise<number | null> {
  if (process.platform !== 'linux' || !existsSync('/proc/self/fd')) return null;
  return openChannelFifo(dir, FIFO_NAMES.image, owner, LINUX_O_PATH);
}

/**
 * The image FIFO, opened on demand one way or the other. Blocking, because the engine reads and
 * writes it with plain read(2) and write(2) on the thread pool; the open returns as soon as the
 * app opens its end, which it does once the helper reported ready. release() calls off an open the
 * app never answers (its decoder failed first, say) and closes what was opened: an armed
 * station's process outlives each card's job, and would otherwise keep the pool thread waiting and
 * the descriptor open.
 */
function imageFifo(dir: string, owner: number): Pick<HelperEndpoints, 'image' | 'driveOut' | 'releaseImage'> {
  const released = new AbortController();
  const opened = new Set<number>();
  const opening = new Set<Promise<number | null>>();
  const open = async (direction: 'read' | 'write'): Promise<number> => {
    if (released.signal.aborted) throw new Error(JOB_ENDED_FIRST);
    const inode = await fifoInode(dir, owner);
    const reopen = inode === null ? null : `/proc/self/fd/${inode}`;
    const call = openFifoUnlessStopped(
      (flags) => (reopen === null ? openChannelFifo(dir, FIFO_NAMES.image, owner, flags) : openFd(reopen, flags)),
      direction,
      released.signal,
    );
    opening.add(call);
    const fd = await call.finally(async () => {
      opening.delete(call);
      if (inode !== null) await closeFd(inode).catch(() => undefined);
    });
    if (fd === null) throw new Error(JOB_ENDED_FIRST);
    // A release that came while the O_PATH descriptor closed found nothing opening: this end is its to close.
    if (released.signal.aborted) {
      await closeFd(fd).catch(() => undefined);
      throw new Error(JOB_ENDED_FIRST);
    }
    opened.add(fd);
    return fd;
  };
  return {
    image: () => open('read'),
    // The same FIFO the other way round: a backup's bytes go out to the app, never into a file.
    driveOut: () => open('write'),
    releaseImage: async () => {
      released.abort();
      const returned = await settleWithin([...opening], RELEASE_WAIT_MS);
      await Promise.all([...opened].map((fd) => closeFd(fd).catch(() => undefined)));
      opened.clear();
      return returned;
    },
  };
}

/**
 * Opens the channel FIFOs. Both control FIFOs are opened non-blocking, so a helper whose app has
 * already gone never hangs here: reading finds end-of-file at once, and opening the reply FIFO
 * fails with ENXIO when nobody holds it open for reading.
 */
export async function openHelperFifos(dir: string, withImageFifo: boolean): Promise<HelperEndpoints> {
  const owner = await checkChannelDir(dir);
  const inFd = await openChannelFifo(dir, FIFO_NAMES.toHelper, owner, constants.O_RDONLY | constants.O_NONBLOCK);
  const outFd = await openChannelFifo(dir, FIFO_NAMES.fromHelper, owner, constants.O_WRONLY | constants.O_NONBLOCK);
  return {
    input: new Socket({ fd: inFd, readable: true, writable: false }),
    output: new Socket({ fd: outFd, readable: false, writable: true }),
    ...(withImageFifo
      ? imageFifo(dir, owner)
      : {
          image: () => Promise.resolve(IMAGE_ON_STDIN),
          driveOut: () => Promise.resolve(IMAGE_ON_STDIN),
          releaseImage: () => Promise.resolve(true),
        }),
  };
}
