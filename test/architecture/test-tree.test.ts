/**
 * The test tree follows the source tree, and a test that needs real block devices (root, loop
 * devices) says so in its name, *.device.test.ts, so that a machine without them can leave out
 * exactly those (the release workflow's macOS and Windows jobs do).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { expect, it } from 'vitest';

/** Folders of test/ that mirror no source folder, and why they exist. */
const OWN_FOLDERS = ['architecture', 'bench', 'e2e', 'fixtures', 'fuzz', 'packaging', 'setup', 'support'];

function testFiles(): string[] {
  return readdirSync('test', { recursive: true, encoding: 'utf8' })
    .filter((path) => /\.test\.tsx?$/.test(path))
    .map((path) => `test/${path}`);
}

it('every test folder mirrors a source folder of the same path, or is one of the test tree’s own', () => {
  const strays = readdirSync('test', { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => `${entry.parentPath}/${entry.name}`.replace(/^test\//, ''))
    .filter((path) => !OWN_FOLDERS.includes(path.split('/')[0] ?? ''))
    .filter((path) => {
      try {
        readdirSync(path);
        return false;
      } catch {
        return true;
      }
    });
  expect(strays).toEqual([]);
});

it('a test that uses loop devices is named *.device.test.ts, and one so named does', () => {
  const usesDevices = (file: string) => /\bdescribeDevices\(/.test(readFileSync(file, 'utf8'));
  const files = testFiles();
  expect(files.filter((file) => usesDevices(file) !== file.endsWith('.device.test.ts'))).toEqual([]);
  expect(files.filter((file) => file.endsWith('.device.test.ts')).length).toBeGreaterThan(20);
});
