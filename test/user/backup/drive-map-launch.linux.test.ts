/**
 * The drive map reader (user/backup/drive-map-launch.ts, drive-map/main.ts): it answers with what
 * the readers find when run here, asks for every byte it reads, and a drive that stalls or fails
 * costs only its process, within its time, with the caller's own error or a sentence.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jobError } from '../../../common/domain/failure.js';
import { MiB } from '../../../common/domain/units.js';
import { usedRanges } from '../../../user/backup/drive-map/used-ranges.js';
import { randomAccess, type ReadImage } from '../../../user/images/free-space/image-reader.js';
import { builtDriveMapLaunch } from '../../support/built-modules.js';
import { osImage } from '../../support/os-image.js';

const { usedRangesInChild, DRIVE_MAP_LIMITS } = await builtDriveMapLaunch();
const dir = mkdtempSync(join(tmpdir(), 'sluice-drive-map-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SIZE = 96 * MiB;
const bytes = readFileSync(osImage(dir, SIZE, 'os.img', { fat32: true, rawPartition: 8 * MiB }));
const readBytes = randomAccess((offset, length) => Promise.resolve(bytes.subarray(offset, offset + length)));

describe('the drive map reader', () => {
  it('answers with the ranges the readers find in this process, having asked for every byte it read', async () => {
    const asked: [number, number][] = [];
    const read: ReadImage = (offset, length) => {
      asked.push([offset, length]);
      return readBytes(offset, length);
    };
    const used = await usedRangesInChild(read, SIZE, '/dev/test');
    expect(used).toEqual(await usedRanges(readBytes, SIZE));
    expect(used.length).toBeGreaterThan(2);
    expect(asked.length).toBeGreaterThan(3);
    expect(asked.every(([, length]) => length <= MiB)).toBe(true);
  });

  it("stops with the caller's own error when a read fails", async () => {
    const unplugged = jobError('source-read-error', '/dev/test stopped at byte offset 4096', { offset: 4096 });
    const read: ReadImage = (offset, length) => (offset > 0 ? Promise.reject(unplugged) : readBytes(offset, length));
    await expect(usedRangesInChild(read, SIZE, '/dev/test')).rejects.toBe(unplugged);
  });

  it('stops a read that never ends at its time limit, and says so', async () => {
    const stalled: ReadImage = () => new Promise(() => undefined);
    const started = performance.now();
    const outcome = usedRangesInChild(stalled, SIZE, '/dev/test', { ...DRIVE_MAP_LIMITS, timeMs: 1000 });
    await expect(outcome).rejects.toMatchObject({
      failure: { code: 'source-corrupt', message: expect.stringMatching(/took more than 1 s/) },
    });
    expect(performance.now() - started).toBeLessThan(5000);
  });
});
