/**
 * macOS's read-back of a file target from the disk (user/files/darwin-uncached.ts): after
 * readFromDisk none of the file's pages is resident any more (mincore), where all of them were
 * after it was written and read. Runs only on macOS (vitest.config.ts); the calls' arguments are
 * checked against glibc on Linux too (darwin-uncached.linux.test.ts).
 */
import { closeSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DARWIN_LIBC, readFromDisk } from '../../../user/files/darwin-uncached.js';
import { randomFiles } from '../../support/random-files.js';

const { file } = randomFiles();

describe('on macOS', () => {
  it('leaves none of a written and read file’s pages in the cache', async () => {
    const koffi = (await import('koffi')).default;
    const lib = koffi.load(DARWIN_LIBC.library);
    const mmap = lib.func('void *mmap(void *addr, size_t len, int prot, int flags, int fd, int64_t offset)');
    const mincore = lib.func('int mincore(void *addr, size_t len, _Out_ uint8_t *vec)');
    const munmap = lib.func('int munmap(void *addr, size_t len)');
    const size = 8 * 1024 * 1024;
    /** How many of the file's 16 KiB pages are resident, as mincore says. */
    const resident = (fd: number): number => {
      const addr: unknown = mmap(null, size, DARWIN_LIBC.PROT_READ, DARWIN_LIBC.MAP_SHARED, fd, 0);
      const pages = new Uint8Array(size / 4096);
      try {
        expect(mincore(addr, size, pages)).toBe(0);
      } finally {
        munmap(addr, size);
      }
      return pages.filter((page) => (page & 1) !== 0).length;
    };
    const { path, fd } = file(size);
    try {
      readFileSync(path);
      expect(resident(fd)).toBeGreaterThan(0);
      await readFromDisk(fd, size);
      expect(resident(fd)).toBe(0);
    } finally {
      closeSync(fd);
    }
  });
});
