/**
 * The packaging configuration cannot be run in full here (no Electron download, no macOS or
 * Windows), so this checks what can be checked without it: every target the issue asks for,
 * the fuses, the entitlements, the file associations on each OS, and that each OS's installer
 * puts the helper's launcher where the app and the polkit action look for it.
 * (What the launchers and the polkit action themselves say is checked in test/user/launcher/elevation.test.ts,
 * and polkitd loads the action for real in test/user/launcher/elevated.device.test.ts.)
 */
import { readFileSync } from 'node:fs';
import { posix, resolve, win32 } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FileAssociation, PlatformSpecificBuildOptions, TargetConfiguration } from 'electron-builder';
import { packagedHelperProgram } from '../../user/launcher/helper-program.js';
import { loadBuilderConfig } from '../../build/scripts/builder-config.js';
import { fpmFileMappings, parseXmlStrictly } from './builder-config.js';

const config = loadBuilderConfig();
const IMAGE_EXTENSIONS = ['img', 'iso', 'xz', 'gz', 'zst', 'zip', 'dmg', 'qcow2'];
const POLICY_SOURCE = 'build/polkit/org.sluice.write-disk-image.policy';
const POLICY_DESTINATION = '/usr/share/polkit-1/actions/org.sluice.write-disk-image.policy';

/** Target name → arches, from electron-builder's `target` list (strings or objects). */
function targets(list: unknown): Map<string, string[]> {
  return new Map(
    (list as (string | TargetConfiguration)[]).map((entry): [string, string[]] =>
      typeof entry === 'string' ? [entry, []] : [entry.target, [entry.arch ?? []].flat().map(String)],
    ),
  );
}

function extensions(associations: FileAssociation | FileAssociation[] | null | undefined): string[] {
  return [associations ?? []].flat().flatMap((association) => [association.ext].flat());
}

/** The extensions build/windows/installer.nsh passes to one of its macros. */
function nsisMacroArguments(source: string, macro: string): string[] {
  return [...source.matchAll(new RegExp(`^\\s*!insertmacro ${macro} (\\S+)$`, 'gm'))].map((match) => match[1]!);
}

describe('electron-builder.yml', () => {
  it('names the app and reads its build resources from build/', () => {
    expect(config.appId).toBe('org.sluice.app');
    expect(config.productName).toBe('Sluice');
    expect(config.directories?.buildResources).toBe('build');
  });

  it('builds AppImage, deb and rpm; dmg and zip for x64 and arm64; an NSIS installer, and no portable exe (it would elevate a launcher from %TEMP%)', () => {
    expect(targets(config.linux?.target)).toEqual(
      new Map([
        ['AppImage', ['x64']],
        ['deb', ['x64']],
        ['rpm', ['x64']],
      ]),
    );
    expect(targets(config.mac?.target)).toEqual(
      new Map([
        ['dmg', ['x64', 'arm64']],
        ['zip', ['x64', 'arm64']],
      ]),
    );
    expect(targets(config.win?.target)).toEqual(new Map([['nsis', ['x64']]]));
  });

  it('flips the fuses the security model asks for (build/HELPER.md), RunAsNode on for the helper', () => {
    expect(config.electronFuses).toEqual({
      // The helper is the app binary with ELECTRON_RUN_AS_NODE=1 (build/helper/sluice-helper{,.cmd}).
      runAsNode: true,
      enableCookieEncryption: true,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
      loadBrowserProcessSpecificV8Snapshot: false,
      // The renderer comes from app:// (electron/main/app-protocol.ts), never file://.
      grantFileProtocolExtraPrivileges: false,
      resetAdHocDarwinSignature: true,
    });
  });

  it('signs macOS builds with the hardened runtime and one entitlement, allow-jit', () => {
    expect(config.mac?.hardenedRuntime).toBe(true);
    for (const path of [config.mac?.entitlements, config.mac?.entitlementsInherit]) {
      expect(path).toBe('build/entitlements.mac.plist');
      const dict = parseXmlStrictly(resolve(path!)).getElementsByTagName('dict')[0]!;
      const keys = Array.from(dict.getElementsByTagName('key'), (key) => key.textContent);
      const values = Array.from(dict.childNodes)
        .filter((node) => node.nodeType === 1 && node.nodeName !== 'key')
        .map((node) => node.nodeName);
      expect(keys).toEqual(['com.apple.security.cs.allow-jit']);
      expect(values).toEqual(['true']);
    }
  });

  it('offers Sluice for the same eight image types on every OS without taking a shared type over', () => {
    // No top-level fileAssociations: electron-builder's NSIS code would make them Windows defaults.
    expect(config.fileAssociations).toBeUndefined();
    expect(extensions(config.mac?.fileAssociations)).toEqual(IMAGE_EXTENSIONS);
    expect(extensions(config.linux?.fileAssociations)).toEqual(IMAGE_EXTENSIONS);
    for (const association of [config.mac?.fileAssociations ?? []].flat()) {
      expect(association.rank, association.ext.toString()).toBe(association.ext === 'qcow2' ? 'Default' : 'Alternate');
    }
    for (const association of [config.linux?.fileAssociations ?? []].flat()) {
      expect(association.mimeType, association.ext.toString()).toMatch(/^application\/[a-z0-9.+-]+$/);
    }

    expect(config.nsis?.include).toBe('build/windows/installer.nsh');
    const installer = readFileSync(config.nsis!.include!, 'utf8');
    expect(nsisMacroArguments(installer, 'sluiceOfferFor')).toEqual(IMAGE_EXTENSIONS);
    expect(nsisMacroArguments(installer, 'sluiceWithdrawFrom')).toEqual(IMAGE_EXTENSIONS);
  });

  it('installs the polkit action from the deb and rpm, and both depend on pkexec', () => {
    for (const target of [config.deb, config.rpm]) {
      expect(fpmFileMappings(target?.fpm)).toContainEqual({ source: POLICY_SOURCE, destination: POLICY_DESTINATION });
    }
    expect(config.deb?.fpm).toEqual(expect.arrayContaining(['--depends', 'pkexec | policykit-1']));
    expect(config.rpm?.fpm).toEqual(expect.arrayContaining(['--depends', 'polkit']));
  });

  it('puts each OS’s launcher in its resources folder, under the name the app starts', () => {
    const launchers = [
      { key: 'linux', platform: 'linux', source: 'build/helper/sluice-helper' },
      { key: 'mac', platform: 'darwin', source: 'build/helper/sluice-helper' },
      { key: 'win', platform: 'win32', source: 'build/helper/sluice-helper.cmd' },
    ] as const;
    for (const { key, platform, source } of launchers) {
      const { file } = packagedHelperProgram('resources', platform);
      const name = (platform === 'win32' ? win32 : posix).basename(file);
      expect([(config[key] as PlatformSpecificBuildOptions).extraResources ?? []].flat(), key).toEqual([
        { from: source, to: name },
      ]);
    }
  });

  it('installs the Linux launcher at the path the polkit action names', () => {
    const annotation = Array.from(parseXmlStrictly(resolve(POLICY_SOURCE)).getElementsByTagName('annotate')).find(
      (element) => element.getAttribute('key') === 'org.freedesktop.policykit.exec.path',
    );
    // deb and rpm install the app directory as /opt/<productName> (electron-builder's installPrefix).
    expect(annotation?.textContent).toBe(packagedHelperProgram(`/opt/${config.productName}/resources`, 'linux').file);
  });
});
