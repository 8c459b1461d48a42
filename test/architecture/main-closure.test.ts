/**
 * The app's main process parses nothing from an image: probing runs in the probe process
 * (user/images/probe/main.ts) and decoding in the decoder. Computed from the built tree: of all
 * the modules the probe's entry reaches under user/, the main process may reach only the few
 * named here, each for a reason that is not reading an image.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { expect, it } from 'vitest';
import { moduleGraph } from '../support/module-graph.js';

const APP_MAIN = (createRequire(import.meta.url)(resolve('package.json')) as { main: string }).main;
const PROBE_ENTRY = 'out/user/images/probe/main.js';

/** What the main process shares with the probe under user/, and why. */
const SHARED_WITH_PROBE = [
  // Reads decoded bytes at offsets from a decoder run, parsing none: the probe for a compressed image's first bytes, main for a repair (reread.ts: the ranges the helper asks for again).
  'out/user/images/decode/decoded-reader.js',
  // Starts the decoder process: main for a flash, the probe for a compressed image's first bytes.
  'out/user/images/processes/decoder-launch.js',
  // Opening a feed merges the job's ranges to what a job message holds (written-extents.ts): arithmetic on numbers the probe sent, no image bytes.
  'out/user/images/feed/mapped-extents.js',
  // The bound on one question the free-space readers ask, and its type: main reads the drive map reader's questions through it (user/backup/drive-map-launch.ts), parsing nothing.
  'out/user/images/free-space/image-reader.js',
  // Both start their image processes through it (spawnImageChild).
  'out/user/images/processes/image-child.js',
  // A backup trimmed to its partitions reads the table from the first bytes of the drive (user/backup/backup-file.ts), not of an image.
  'out/user/images/formats/partition-table.js',
  // Reads a small file whole, with a bound: the image cache's descriptions (user/cache/image-cache.ts) and the catalogue icons it serves (electron/core/catalogue-icons.ts), never an image.
  'out/user/images/files/sidecar-file.js',
];

function read(file: string): string | null {
  return existsSync(file) ? readFileSync(file, 'utf8') : null;
}

it('the main process reaches none of the probe’s parsers: the probe process reads the image', () => {
  const main = moduleGraph([APP_MAIN], read);
  const probe = moduleGraph([PROBE_ENTRY], read);
  expect(main.missing).toEqual([]);
  expect(probe.missing).toEqual([]);
  // The walk sees the parsers from the probe's entry, so it would see them from main's.
  expect([...probe.files]).toEqual(
    expect.arrayContaining([
      'out/user/images/probe/probe.js',
      'out/user/images/formats/qcow2.js',
      'out/user/images/formats/xz-index.js',
      'out/user/images/formats/zip-directory.js',
      'out/user/images/formats/dmg.js',
    ]),
  );
  const shared = [...probe.files].filter((file) => file.startsWith('out/user/') && main.files.has(file)).sort();
  expect(shared).toEqual([...SHARED_WITH_PROBE].sort());
  expect(main.files).toContain('out/user/images/processes/probe-launch.js');
});
