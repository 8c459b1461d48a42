/**
 * Runs electron-builder on electron-builder.yml for real (the unpacked Linux app, `--dir`) and
 * inspects what it packed: which files ship, that every module the entry points import ships
 * with them, where the native addon lands, and the fuses written into the binary.
 *
 * What cannot run here is replaced, and only that: the Electron runtime cannot be downloaded, so
 * a stand-in directory holds an `electron` file carrying Electron's fuse wire (sentinel, version,
 * Electron's default fuse states), which is all that electron-builder and @electron/fuses read or
 * write in it; and native modules are not rebuilt (that needs Electron's headers from the network;
 * drivelist is N-API, so the addon built by `npm install` is the one that ships on Linux x64).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, posix, resolve } from 'node:path';
import { extractFile, listPackage } from '@electron/asar';
import { FuseV1Options, getCurrentFuseWire } from '@electron/fuses';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBuilderConfig } from './builder-config.js';

const require = createRequire(import.meta.url);
const config = loadBuilderConfig();
const HELPER_ENTRY = 'out/worker/helper/main.js';
const APP_MAIN = (require(resolve('package.json')) as { main: string }).main;
/** Electron's own fuse defaults, in FuseV1Options order: RunAsNode, cookie encryption, NODE_OPTIONS, inspect, asar integrity, only-asar, browser snapshot, file:// privileges. */
const ELECTRON_DEFAULT_FUSES = '10110001';
const FUSE_SENTINEL = 'dL7pKGdnNz796PbbjQWNKmHXBZaB9tsX';

function writeStandInElectron(directory: string): void {
  mkdirSync(join(directory, 'locales'), { recursive: true });
  mkdirSync(join(directory, 'resources'));
  const wire = Buffer.concat([Buffer.from(FUSE_SENTINEL), Buffer.from([1, ELECTRON_DEFAULT_FUSES.length]), Buffer.from(ELECTRON_DEFAULT_FUSES)]);
  writeFileSync(join(directory, 'electron'), wire, { mode: 0o755 });
  for (const locale of ['en-US', 'de', 'fr', 'ja']) writeFileSync(join(directory, 'locales', `${locale}.pak`), locale);
  writeFileSync(join(directory, 'chrome-sandbox'), '');
}

/** Module specifiers a compiled ESM file imports (static and dynamic), as TypeScript's scanner sees them. */
function importsOf(source: string): string[] {
  return ts.preProcessFile(source, true, true).importedFiles.map((file) => file.fileName);
}

function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
}

describe('the unpacked Linux app electron-builder makes from electron-builder.yml', () => {
  const work = mkdtempSync(join(tmpdir(), 'sluice-package-'));
  const appDir = join(work, 'dist', 'linux-unpacked');
  const asarPath = join(appDir, 'resources', 'app.asar');
  let files: Set<string>;

  beforeAll(() => {
    writeStandInElectron(join(work, 'electron'));
    // Until the desktop app's main process is built, package the helper as the entry instead:
    // electron-builder refuses a package whose "main" is missing.
    const mainOverride = existsSync(APP_MAIN) ? [] : [`-c.extraMetadata.main=${HELPER_ENTRY}`];
    execFileSync(
      process.execPath,
      [
        require.resolve('electron-builder/cli.js'),
        '--linux', 'dir',
        '--publish', 'never',
        `-c.electronDist=${join(work, 'electron')}`,
        '-c.npmRebuild=false',
        `-c.directories.output=${join(work, 'dist')}`,
        ...mainOverride,
      ],
      { stdio: 'pipe', timeout: 180_000, env: { ...process.env, ELECTRON_SKIP_BINARY_DOWNLOAD: '1' } },
    );
    files = new Set(listPackage(asarPath, { isPack: false }).map((path) => path.replaceAll('\\', '/').replace(/^\//, '')));
  }, 240_000);
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('holds the compiled app and its manifest, and none of the tests, build scripts, CLI, source maps or type declarations', () => {
    expect(files).toContain('package.json');
    expect(files).toContain(HELPER_ENTRY);
    const stray = [...files].filter((path) =>
      /^out\/(test|build)\/|^out\/worker\/cli\/|^out\/electron\/launch\.js$|\.map$|\.d\.[cm]?ts$/.test(path),
    );
    expect(stray).toEqual([]);
    const built = existsSync('out/renderer') ? readdirSync('out/renderer', { recursive: true, withFileTypes: true }) : [];
    for (const entry of built.filter((entry) => entry.isFile())) {
      expect(files).toContain(posix.join(resolve(entry.parentPath).slice(resolve('.').length + 1).replaceAll('\\', '/'), entry.name));
    }
  });

  it('holds every module the main process and the helper import, and the packages they name', () => {
    const entries = [(JSON.parse(extractFile(asarPath, 'package.json').toString()) as { main: string }).main, HELPER_ENTRY];
    const seen = new Set<string>();
    const packages = new Set<string>();
    const missing: string[] = [];
    const queue = [...entries];
    while (queue.length > 0) {
      const file = queue.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      if (!files.has(file)) {
        missing.push(file);
        continue;
      }
      for (const specifier of importsOf(extractFile(asarPath, file).toString('utf8'))) {
        if (specifier.startsWith('.')) queue.push(posix.normalize(posix.join(posix.dirname(file), specifier)));
        else if (!specifier.startsWith('node:') && !builtinModules.includes(specifier) && specifier !== 'electron') packages.add(packageName(specifier));
      }
    }
    expect(missing).toEqual([]);
    for (const name of packages) expect(files, `package ${name}`).toContain(`node_modules/${name}/package.json`);
  });

  it('ships production dependencies only: no benchmark, build or UI libraries', () => {
    const shipped = new Set([...files].filter((path) => path.startsWith('node_modules/')).map((path) => packageName(path.slice('node_modules/'.length))));
    for (const name of ['etcher-sdk', 'mountutils', 'lzma-native', 'usb', 'typescript', 'react', 'electron', 'electron-builder', 'vite']) {
      expect(shipped, name).not.toContain(name);
    }
  });

  it('puts drivelist’s native addon outside the archive, where it can be loaded', () => {
    const addon = 'node_modules/drivelist/build/Release/drivelist.node';
    expect(statSync(join(appDir, 'resources', 'app.asar.unpacked', addon)).isFile()).toBe(true);
  });

  it('keeps Chromium’s English strings only', () => {
    expect(readdirSync(join(appDir, 'locales'))).toEqual(['en-US.pak']);
  });

  it('installs the pkexec launcher next to the app binary, executable', () => {
    expect(statSync(join(appDir, 'sluice')).isFile()).toBe(true);
    expect(statSync(join(appDir, 'sluice-helper')).mode & 0o777).toBe(0o755);
  });

  it('writes the configured fuses into the binary', async () => {
    const wire = await getCurrentFuseWire(join(appDir, 'sluice'));
    const { resetAdHocDarwinSignature: _notAFuse, ...fuses } = config.electronFuses!;
    for (const [name, enabled] of Object.entries(fuses)) {
      const option = FuseV1Options[(name[0]!.toUpperCase() + name.slice(1)) as keyof typeof FuseV1Options];
      expect(option, name).toBeDefined();
      // The wire stores each fuse as the character '1' (on) or '0' (off).
      expect(String.fromCharCode(wire[option] as number), name).toBe(enabled ? '1' : '0');
    }
  });
});
