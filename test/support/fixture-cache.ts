/**
 * Fixtures that take seconds to build, kept in /var/tmp between runs (keyed by a version in their
 * name: change it when the recipe changes) and built once per machine.
 */
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const CACHE = '/var/tmp/sluice-test-fixtures';

/** Builds `name` in a fresh folder with `build` unless the cache holds it; returns its folder. */
export function cached(name: string, build: (dir: string) => void): string {
  const dir = join(CACHE, name);
  if (existsSync(join(dir, '.done'))) return dir;
  mkdirSync(CACHE, { recursive: true });
  const work = `${dir}.${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work);
  build(work);
  writeFileSync(join(work, '.done'), '');
  rmSync(dir, { recursive: true, force: true });
  renameSync(work, dir);
  return dir;
}
