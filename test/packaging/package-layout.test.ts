/**
 * Runs electron-builder on electron-builder.yml for real (the unpacked Linux app, `--dir`) and
 * inspects what it packed: which files ship, that every module the entry points import ships
 * with them (the helper's, the decoder's and the probe's outside the archive), where the native
 * addon lands, the fuses written into the binary, and that the helper's launcher, as installed,
 * starts the helper.
 *
 * What cannot run here is replaced, and only that: the Electron runtime cannot be downloaded, so
 * a stand-in directory holds an `electron` file carrying Electron's fuse wire (sentinel, version,
 * Electron's default fuse states), which is all that electron-builder and @electron/fuses read or
 * write in it; and native modules are not rebuilt (that needs Electron's headers from the network;
 * drivelist is N-API, so the addon built by `npm install` is the one that ships on Linux x64).
 * To run the launcher, Node takes the stand-in's place (see the last test).
 */
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, posix, resolve } from 'node:path';
import { extractFile, listPackage } from '@electron/asar';
import { flipFuses, FuseV1Options, FuseVersion } from '@electron/fuses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRefusalBeforeStart, probePackagedHelper } from '../../build/scripts/probe-helper.js';
import { moduleGraph, packageName } from '../support/module-graph.js';
import { appBinary, fuseMismatches } from '../../build/scripts/check-fuses.js';

const require = createRequire(import.meta.url);
const APP_MAIN = (require(resolve('package.json')) as { main: string }).main;
const PRELOAD = 'out/electron/preload/preload.cjs';
const HELPER_ENTRY = 'out/run/helper.js';
const DECODER_ENTRY = 'out/run/decoder.js';
const PROBE_ENTRY = 'out/run/probe.js';
/** Electron's own fuse defaults, in FuseV1Options order: RunAsNode, cookie encryption, NODE_OPTIONS, inspect, asar integrity, only-asar, browser snapshot, file:// privileges. */
const ELECTRON_DEFAULT_FUSES = '10110001';
const FUSE_SENTINEL = 'dL7pKGdnNz796PbbjQWNKmHXBZaB9tsX';

function writeStandInElectron(directory: string): void {
  mkdirSync(join(directory, 'locales'), { recursive: true });
  mkdirSync(join(directory, 'resources'));
  const wire = Buffer.concat([
    Buffer.from(FUSE_SENTINEL),
    Buffer.from([1, ELECTRON_DEFAULT_FUSES.length]),
    Buffer.from(ELECTRON_DEFAULT_FUSES),
  ]);
  writeFileSync(join(directory, 'electron'), wire, { mode: 0o755 });
  for (const locale of ['en-US', 'de', 'fr', 'ja']) writeFileSync(join(directory, 'locales', `${locale}.pak`), locale);
  writeFileSync(join(directory, 'chrome-sandbox'), '');
}

/**
 * A fresh directory with no node_modules in it or above it, as under /opt: Node would resolve a
 * package the helper imports from any ancestor's node_modules, and hide one that did not ship.
 */
function isolatedDirectory(): string {
  for (const base of [tmpdir(), '/var/tmp']) {
    const ancestors = resolve(base)
      .split('/')
      .map((_, index, parts) => parts.slice(0, index + 1).join('/') || '/');
    if (!ancestors.some((dir) => existsSync(join(dir, 'node_modules'))))
      return mkdtempSync(join(base, 'sluice-installed-'));
  }
  throw new Error(
    `${tmpdir()} and /var/tmp both have a node_modules folder above them; the helper could load packages from it that did not ship.`,
  );
}

describe('the unpacked Linux app electron-builder makes from electron-builder.yml', () => {
  const work = mkdtempSync(join(tmpdir(), 'sluice-package-'));
  const appDir = join(work, 'dist', 'linux-unpacked');
  const resources = join(appDir, 'resources');
  const asarPath = join(resources, 'app.asar');
  const unpacked = join(resources, 'app.asar.unpacked');
  const cleanup = [work];
  let files: Set<string>;

  beforeAll(() => {
    writeStandInElectron(join(work, 'electron'));
    execFileSync(
      process.execPath,
      [
        require.resolve('electron-builder/cli.js'),
        '--linux',
        'dir',
        '--publish',
        'never',
        `-c.electronDist=${join(work, 'electron')}`,
        '-c.npmRebuild=false',
        `-c.directories.output=${join(work, 'dist')}`,
      ],
      { stdio: 'pipe', timeout: 180_000, env: { ...process.env, ELECTRON_SKIP_BINARY_DOWNLOAD: '1' } },
    );
    files = new Set(
      listPackage(asarPath, { isPack: false }).map((path) => path.replaceAll('\\', '/').replace(/^\//, '')),
    );
  }, 240_000);
  afterAll(() => {
    for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
  });

  it('holds the main process, its preload bundle and the built renderer, and none of the tests, build scripts, CLI, source maps or type declarations', () => {
    expect(files).toContain('package.json');
    expect(JSON.parse(extractFile(asarPath, 'package.json').toString())).toMatchObject({
      main: APP_MAIN,
      type: 'module',
    });
    for (const entry of [APP_MAIN, PRELOAD, HELPER_ENTRY, 'out/ui/index.html']) expect(files).toContain(entry);
    const stray = [...files].filter((path) =>
      /^out\/(test|build|cli|renderer|privileged)\/|^out\/run\/(sluice|bundles)|^out\/electron\/(launch|electron-binary|preload\/preload)\.js$|\.map$|\.d\.[cm]?ts$/.test(
        path,
      ),
    );
    expect(stray).toEqual([]);
    for (const entry of readdirSync('out/ui', { recursive: true, withFileTypes: true }).filter((entry) =>
      entry.isFile(),
    )) {
      expect(files).toContain(
        posix.join(
          resolve(entry.parentPath)
            .slice(resolve('.').length + 1)
            .replaceAll('\\', '/'),
          entry.name,
        ),
      );
    }
  });

  it('holds every module the main process and its preload import, and the packages they name', () => {
    const { missing, packages } = moduleGraph([APP_MAIN, PRELOAD], (file) =>
      files.has(file) ? extractFile(asarPath, file).toString('utf8') : null,
    );
    expect(missing).toEqual([]);
    for (const name of packages) expect(files, `package ${name}`).toContain(`node_modules/${name}/package.json`);
  });

  it('unpacks every module the helper, the decoder and the probe import, and the packages they name with all of theirs, where Node-mode processes run them', () => {
    const read = (file: string) =>
      existsSync(join(unpacked, file)) ? readFileSync(join(unpacked, file), 'utf8') : null;
    const { missing, packages } = moduleGraph([HELPER_ENTRY, DECODER_ENTRY, PROBE_ENTRY], read);
    expect(missing).toEqual([]);
    // fast-xml-parser, yaml and valibot are bundled into them (build/scripts/bundle-processes.ts BUNDLED_PACKAGES).
    expect([...packages].sort()).toEqual(['@balena/udif', 'xz-decompress']);
    const needed = [...packages];
    for (const name of needed) {
      const manifest = read(`node_modules/${name}/package.json`);
      expect(manifest, `package ${name}`).not.toBeNull();
      const { dependencies = {} } = JSON.parse(manifest ?? '{}') as { dependencies?: Record<string, string> };
      for (const dependency of Object.keys(dependencies)) if (!needed.includes(dependency)) needed.push(dependency);
    }
  });

  it('ships production dependencies only: no benchmark, build or UI libraries', () => {
    const shipped = new Set(
      [...files]
        .filter((path) => path.startsWith('node_modules/'))
        .map((path) => packageName(path.slice('node_modules/'.length))),
    );
    for (const name of [
      'etcher-sdk',
      'mountutils',
      'lzma-native',
      'usb',
      'typescript',
      'react',
      'electron',
      'electron-builder',
      'vite',
    ]) {
      expect(shipped, name).not.toContain(name);
    }
  });

  it('puts drivelist’s native addon outside the archive, where it can be loaded', () => {
    const addon = 'node_modules/drivelist/build/Release/drivelist.node';
    expect(statSync(join(unpacked, addon)).isFile()).toBe(true);
  });

  it('keeps Chromium’s English strings only', () => {
    expect(readdirSync(join(appDir, 'locales'))).toEqual(['en-US.pak']);
  });

  it('writes the configured fuses into the binary, as the release workflow’s check reads them; a flipped fuse fails that check', async () => {
    const binary = appBinary(appDir, 'linux');
    expect(binary).toBe(join(appDir, 'sluice'));
    expect(await fuseMismatches(binary)).toEqual([]);
    // A build that lost a fuse (NODE_OPTIONS let through to the helper's binary) must be caught.
    const flipped = join(work, 'flipped-sluice');
    cpSync(binary, flipped);
    await flipFuses(flipped, { version: FuseVersion.V1, [FuseV1Options.EnableNodeOptionsEnvironmentVariable]: true });
    expect(await fuseMismatches(flipped)).toEqual([
      'enableNodeOptionsEnvironmentVariable: the binary has it on, electron-builder.yml says off',
    ]);
  });

  it('installs the helper’s launcher in resources, executable, and through it the helper starts and answers', async () => {
    expect(statSync(join(resources, 'sluice-helper')).mode & 0o777).toBe(0o755);
    // The same layout with Node in place of the Electron binary, which is what ELECTRON_RUN_AS_NODE
    // makes of it (the stand-in has only a fuse wire and cannot run).
    const installed = isolatedDirectory();
    cleanup.push(installed);
    cpSync(appDir, installed, { recursive: true });
    rmSync(join(installed, 'sluice'));
    symlinkSync(process.execPath, join(installed, 'sluice'));

    const result = await probePackagedHelper(join(installed, 'resources'), 'linux');
    expect(result.stderr).toBe('');
    expect(result.messages).toEqual([
      { type: 'ready', pid: expect.any(Number) },
      { type: 'fatal', code: 'protocol-error', message: expect.stringContaining('cancel before start') },
    ]);
    expect(isRefusalBeforeStart(result)).toBe(true);
  });
});
