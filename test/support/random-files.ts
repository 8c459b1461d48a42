/**
 * Files of random bytes in a scratch directory of the test file's own, removed after its tests:
 * the read-back tests of a file target (darwin-uncached.*.test.ts) on Linux and on macOS.
 */
import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

export interface RandomFiles {
  dir: string;
  /** A file of `size` random bytes, and a descriptor open on it for reading. */
  file(size: number): { path: string; fd: number };
}

export function randomFiles(): RandomFiles {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-uncached-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return {
    dir,
    file(size) {
      const path = join(dir, `file-${size}`);
      writeFileSync(path, randomBytes(size));
      return { path, fd: openSync(path, 'r') };
    },
  };
}
