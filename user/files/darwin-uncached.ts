/**
 * macOS: reading a file back from the disk rather than from the cache, for the verify of a file
 * target. macOS has no O_DIRECT (Node's constants.O_DIRECT is undefined there, so the flag was
 * silently absent and the read-back came from the cache). fcntl(F_NOCACHE) keeps a descriptor's
 * reads from filling the cache, but pages already cached are still served (fio issue #48; Apple
 * developer forums thread 25464: a file read with F_NOCACHE at 5.6 GB/s off a disk doing 110 MB/s).
 * So the file's clean cached pages are dropped first: msync(MS_INVALIDATE) over a shared read-only
 * mapping, as fio does on macOS for want of posix_fadvise (fio commit 41880b9, "mac: implement
 * (file) cache invalidation", from code Apple's engineers provided). The data must have been
 * synced before: dirty pages are not dropped.
 *
 * Node can make neither call, so this goes through koffi (a small FFI with prebuilt binaries, no
 * compiler needed). It is loaded only on macOS and only by the unprivileged side (file targets are
 * written as the user); root never loads it (test/architecture/helper-closure.test.ts).
 */
import type { LibraryHandle } from 'koffi';

/** What differs between the C libraries this runs against: macOS's for real, Linux's in tests. */
export interface LibcFlavour {
  library: string;
  /** <sys/fcntl.h> F_NOCACHE; null where the system has none (Linux). */
  F_NOCACHE: number | null;
  PROT_READ: number;
  MAP_SHARED: number;
  MS_INVALIDATE: number;
}

/** macOS's values (<sys/fcntl.h>, <sys/mman.h>). */
export const DARWIN_LIBC: LibcFlavour = {
  library: '/usr/lib/libSystem.B.dylib',
  F_NOCACHE: 48,
  PROT_READ: 0x1,
  MAP_SHARED: 0x1,
  MS_INVALIDATE: 0x2,
};

/** A mapping of at most this much at a time: address space is plentiful on 64 bits, but need not be spent. */
const MAP_CHUNK = 1024 * 1024 * 1024;
/** mmap's MAP_FAILED, (void *)-1. */
const MAP_FAILED = 0xffffffffffffffffn;

export interface Libc {
  readonly flavour: LibcFlavour;
  /** fcntl(fd, cmd, int): variadic in C, so the argument's type is named. */
  fcntl(fd: number, cmd: number, arg: number): number;
  /** Drops the clean cached pages of the first `size` bytes of the file open on `fd`. */
  dropCachedPages(fd: number, size: number, chunk?: number): void;
}

export async function loadLibc(flavour: LibcFlavour): Promise<Libc> {
  const koffi = (await import('koffi')).default;
  const lib: LibraryHandle = koffi.load(flavour.library);
  const fcntl = lib.func('int fcntl(int fd, int cmd, ...)');
  const mmap = lib.func('void *mmap(void *addr, size_t len, int prot, int flags, int fd, int64_t offset)');
  const msync = lib.func('int msync(void *addr, size_t len, int flags)');
  const munmap = lib.func('int munmap(void *addr, size_t len)');
  const failed = (call: string): Error => new Error(`${call} failed: errno ${koffi.errno()}`);
  return {
    flavour,
    fcntl: (fd, cmd, arg) => fcntl(fd, cmd, 'int', arg) as number,
    dropCachedPages: (fd, size, chunk = MAP_CHUNK) => {
      for (let at = 0; at < size; at += chunk) {
        const length = Math.min(chunk, size - at);
        const addr: unknown = mmap(null, length, flavour.PROT_READ, flavour.MAP_SHARED, fd, at);
        if (addr === null || koffi.address(addr) === MAP_FAILED) throw failed('mmap');
        try {
          if ((msync(addr, length, flavour.MS_INVALIDATE) as number) !== 0) throw failed('msync');
        } finally {
          munmap(addr, length);
        }
      }
    },
  };
}

let darwin: Promise<Libc> | null = null;

/**
 * Makes what is read through `fd` (a file of `size` bytes, synced) come from the disk: its cached
 * pages dropped, and F_NOCACHE set so that reading does not cache them again.
 */
export async function readFromDisk(fd: number, size: number, libc?: Libc): Promise<void> {
  const calls = libc ?? (await (darwin ??= loadLibc(DARWIN_LIBC)));
  if (size > 0) calls.dropCachedPages(fd, size);
  const noCache = calls.flavour.F_NOCACHE;
  if (noCache !== null && calls.fcntl(fd, noCache, 1) === -1) throw new Error('fcntl(F_NOCACHE) failed');
}
