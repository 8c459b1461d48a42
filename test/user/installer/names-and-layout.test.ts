import { expect, it } from 'vitest';
import { JobError } from '../../../common/domain/failure.js';
import { GiB, MiB } from '../../../common/domain/units.js';
import { folderNames } from '../../../user/installer/fat-names.js';
import { stickPlan } from '../../../user/installer/layout.js';
import type { TreeFolder } from '../../../user/installer/tree.js';

const shortText = (short: Uint8Array) => String.fromCharCode(...short);

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof JobError) return error.failure.message;
    throw error;
  }
  throw new Error('not refused');
}

it('20,000 names that share a basis get unique short names, counted on rather than searched from 1', () => {
  const names = Array.from({ length: 20_000 }, (_, i) => `package-number-${i}.deb`);
  const started = performance.now();
  const shorts = folderNames(names, 'x.iso', '/pool').map((n) => shortText(n.short));
  const seconds = (performance.now() - started) / 1000;
  console.log(`20,000 short names in ${seconds.toFixed(2)} s`);
  expect(new Set(shorts).size).toBe(20_000);
  expect(shorts.slice(0, 2)).toEqual(['PACKAG~1DEB', 'PACKAG~2DEB']);
  expect(shorts.every((s) => s.length === 11)).toBe(true);
  // Searching from ~1 for each name took 20,000²/2 steps: 52 s here; counting on, 0.76 s (load 11).
  expect(seconds).toBeLessThan(5);
});

it('two names alike but for case are refused, naming both and their folder', () => {
  expect(refusal(() => folderNames(['README.TXT', 'setup.exe', 'readme.txt'], 'x.iso', '/docs'))).toBe(
    'x.iso holds both "README.TXT" and "readme.txt" in the folder "/docs": FAT32 does not tell names apart by case, so installer mode cannot copy both.',
  );
});

it('no generated short name is another entry’s name in upper case (FAT finds a file by either name, any case)', () => {
  // foo.txt would get FOO~1.TXT, which is what "foo~1.txt" is looked up as.
  const names = folderNames(['foo.txt', 'foo~1.txt', 'SETUP.EXE'], 'x.iso', '');
  expect(names.map((n) => shortText(n.short))).toEqual(['FOO~2   TXT', 'FOO~1~1 TXT', 'SETUP   EXE']);
  expect(names.map((n) => n.long.length)).toEqual([1, 1, 0]);
});

const tree: TreeFolder = { name: '', folders: [], files: [] };
const request = { sectorBytes: 512, serial: 1, diskSignature: 2, image: 'x.iso' };

it('a drive past an MBR partition’s 2 TiB is refused: the rest of it would be left unwritten, not known free', () => {
  expect(refusal(() => stickPlan(tree, { ...request, driveBytes: 3 * 1024 * GiB }))).toMatch(
    /^The drive has 3298534883328 bytes, more than an MBR partition reaches \(2199023255040\); .* Use a drive of at most 2 TiB\.$/,
  );
  // At the limit the whole drive is the partition, the rest is the volume's free space.
  const plan = stickPlan(tree, { ...request, driveBytes: 2 ** 32 * 512 - 512 });
  expect(plan.partitionStart + plan.partitionBytes).toBe(2 ** 32 * 512 - 512);
  expect(plan.partitionStart).toBe(4 * MiB);
});
