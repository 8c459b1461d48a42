/**
 * macOS's read-back of a file target from the disk (user/files/darwin-uncached.ts). The calls go
 * through koffi into the C library, so they are checked where they can run:
 * - on Linux, against glibc, whose fcntl, mmap, msync and munmap take the same arguments: that the
 *   variadic int reaches fcntl (F_SETFL O_NONBLOCK, read back with F_GETFL) and that the mapping
 *   walk over a file in chunks succeeds. Linux's msync(MS_INVALIDATE) keeps clean pages, so what
 *   the drop does is proven on macOS only:
 * - on macOS, that none of the file's pages is resident after readFromDisk:
 *   darwin-uncached.darwin.test.ts, which runs there only.
 */
import { closeSync, constants, openSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadLibc, readFromDisk, type LibcFlavour } from '../../../user/files/darwin-uncached.js';
import { randomFiles } from '../../support/random-files.js';

const { dir, file } = randomFiles();

/** glibc's values (<bits/fcntl-linux.h>, <bits/mman-linux.h>); Linux has no F_NOCACHE. */
const GLIBC: LibcFlavour = {
  library: 'libc.so.6',
  F_NOCACHE: null,
  PROT_READ: 0x1,
  MAP_SHARED: 0x1,
  MS_INVALIDATE: 0x2,
};
const F_GETFL = 3;
const F_SETFL = 4;

describe('the calls, against glibc', () => {
  it('passes fcntl its variadic int', async () => {
    const libc = await loadLibc(GLIBC);
    const { fd } = file(4096);
    try {
      expect(libc.fcntl(fd, F_GETFL, 0) & constants.O_NONBLOCK).toBe(0);
      expect(libc.fcntl(fd, F_SETFL, constants.O_NONBLOCK)).toBe(0);
      expect(libc.fcntl(fd, F_GETFL, 0) & constants.O_NONBLOCK).toBe(constants.O_NONBLOCK);
    } finally {
      closeSync(fd);
    }
  });

  it('maps, invalidates and unmaps a file chunk by chunk, the last one short, and the file reads the same after', async () => {
    const libc = await loadLibc(GLIBC);
    const { path, fd } = file(3 * 1024 * 1024 + 4096);
    const before = readFileSync(path);
    try {
      libc.dropCachedPages(fd, before.length, 1024 * 1024);
      await readFromDisk(fd, before.length, libc);
      expect(readFileSync(path).equals(before)).toBe(true);
    } finally {
      closeSync(fd);
    }
  });

  it('says which call failed: a descriptor not open for reading cannot be mapped', async () => {
    const libc = await loadLibc(GLIBC);
    const path = join(dir, 'write-only');
    writeFileSync(path, randomBytes(8192));
    const fd = openSync(path, 'w');
    try {
      expect(() => libc.dropCachedPages(fd, 8192)).toThrow(/^mmap failed: errno \d+/);
    } finally {
      closeSync(fd);
    }
  });
});
