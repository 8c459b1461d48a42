/**
 * The test helper's clean-up leaves no loop device behind: not even one whose backing file the
 * test deleted while it was attached (then the kernel names it "… (deleted)"). It detaches only
 * loops this process created: another loop over a deleted file is left alone.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { expect, it } from 'vitest';
import { describeDevices } from './device-suite.js';
import { cleanupLoops, createLoop } from './loop-device.js';

const attached = (path: string) =>
  execFileSync('losetup', ['--list', '--noheadings', '--output', 'NAME'], { encoding: 'utf8' })
    .split('\n')
    .map((l) => l.trim())
    .includes(path);

describeDevices('cleanupLoops', () => {
  it('detaches its own loop over a deleted backing file, and no loop it did not create', () => {
    const mine = createLoop({ size: 1 << 20 });
    rmSync(dirname(mine.backing), { recursive: true, force: true });
    // A loop over a deleted file that this process did not create through the helper.
    const dir = mkdtempSync('/dev/shm/sluice-test-foreign-');
    const file = join(dir, 'foreign.img');
    writeFileSync(file, Buffer.alloc(1 << 20));
    const foreign = execFileSync('losetup', ['--find', '--show', file], { encoding: 'utf8' }).trim();
    rmSync(dir, { recursive: true, force: true });
    try {
      expect(
        execFileSync('losetup', ['--list', '--noheadings', '--output', 'BACK-FILE', mine.path], { encoding: 'utf8' }),
      ).toContain('(deleted)');
      cleanupLoops();
      expect(attached(mine.path)).toBe(false);
      expect(attached(foreign)).toBe(true);
    } finally {
      execFileSync('losetup', ['--detach', foreign]);
    }
  });
});
