import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findTool } from '../../node/run-tool.js';
import { PACKAGE_LIST, parsePackageList } from './check-tools.js';

const script = 'out/test/setup/check-tools.js';
const listed = parsePackageList(readFileSync(PACKAGE_LIST, 'utf8'));
const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A PATH of one directory holding links to every listed command this machine has, but `leave`. */
async function pathWithout(leave: readonly string[]): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-path-'));
  dirs.push(dir);
  for (const command of listed.flatMap((pkg) => pkg.provides)) {
    if (isAbsolute(command) || leave.includes(command)) continue;
    const found = await findTool(command);
    if (found) symlinkSync(found, join(dir, command));
  }
  return dir;
}

describe.runIf(process.platform === 'linux')('the test tools check', () => {
  it('names, in one line, the missing commands and the packages that hold them', async () => {
    const run = spawnSync(process.execPath, [script], {
      env: { PATH: await pathWithout(['zstd', 'mcopy', 'qemu-io']) },
      encoding: 'utf8',
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toBe(
      'The tests need mcopy, zstd, qemu-io, missing here: run `sudo npm run setup:test` (Debian/Ubuntu packages: mtools zstd qemu-utils).\n',
    );
  });

  it('passes quietly where everything listed is installed (this machine, set up by the script)', async () => {
    const run = spawnSync(process.execPath, [script], { env: { PATH: await pathWithout([]) }, encoding: 'utf8' });
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
  });
});

it('the list names each Debian package once, with what shows it is installed', () => {
  const names = listed.map((pkg) => pkg.name);
  expect(new Set(names).size).toBe(names.length);
  expect(names).toEqual(expect.arrayContaining(['fdisk', 'chromium', 'sudo', 'make', 'g++']));
  expect(listed.find((pkg) => pkg.name === 'fdisk')?.provides).toEqual(['sfdisk']);
});
