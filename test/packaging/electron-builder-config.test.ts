/**
 * The packaging configuration cannot be run in full here (no Electron download, no macOS or
 * Windows), so this checks what can be checked without it: every target the issue asks for,
 * the fuses, the entitlements, the file associations on each OS, and the polkit action with the
 * launcher it names, which is run for real.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { FileAssociation, TargetConfiguration } from 'electron-builder';
import { HELPER_V8_FLAGS } from '../../worker/helper/launch.js';
import { isRefusalBeforeStart, probeHelper } from '../../build/scripts/probe-helper.js';
import { fpmFileMappings, loadBuilderConfig, parseXmlStrictly } from './builder-config.js';

const config = loadBuilderConfig();
const IMAGE_EXTENSIONS = ['img', 'iso', 'xz', 'gz', 'zst', 'zip', 'dmg', 'qcow2'];
const POLKIT_ACTION_ID = 'org.sluice.flash';
const POLICY_SOURCE = 'build/linux/org.sluice.flash.policy';
const POLICY_DESTINATION = `/usr/share/polkit-1/actions/${POLKIT_ACTION_ID}.policy`;

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

  it('builds AppImage, deb and rpm; dmg and zip for x64 and arm64; an NSIS installer and a portable exe', () => {
    expect(targets(config.linux?.target)).toEqual(new Map([['AppImage', ['x64']], ['deb', ['x64']], ['rpm', ['x64']]]));
    expect(targets(config.mac?.target)).toEqual(new Map([['dmg', ['x64', 'arm64']], ['zip', ['x64', 'arm64']]]));
    expect(targets(config.win?.target)).toEqual(new Map([['nsis', ['x64']], ['portable', ['x64']]]));
  });

  it('flips the fuses the security model asks for, with RunAsNode on exactly while the helper is launched through it', () => {
    const helperRunsAsNode = readFileSync('worker/helper/launch.ts', 'utf8').includes("ELECTRON_RUN_AS_NODE: '1'");
    expect(config.electronFuses).toEqual({
      runAsNode: helperRunsAsNode,
      enableCookieEncryption: true,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
      loadBrowserProcessSpecificV8Snapshot: false,
      grantFileProtocolExtraPrivileges: true,
      resetAdHocDarwinSignature: true,
    });
  });

  it('signs macOS builds with the hardened runtime and one entitlement, allow-jit', () => {
    expect(config.mac?.hardenedRuntime).toBe(true);
    for (const path of [config.mac?.entitlements, config.mac?.entitlementsInherit]) {
      expect(path).toBe('build/entitlements.mac.plist');
      const dict = parseXmlStrictly(resolve(path!)).getElementsByTagName('dict')[0]!;
      const keys = Array.from(dict.getElementsByTagName('key'), (key) => key.textContent);
      const values = Array.from(dict.childNodes).filter((node) => node.nodeType === 1 && node.nodeName !== 'key').map((node) => node.nodeName);
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

  it('ships a polkit action that is valid against polkit’s DTD and asks for an administrator every time', () => {
    execFileSync('xmllint', ['--noout', '--nonet', '--dtdvalid', 'test/fixtures/polkit/policyconfig-1.dtd', POLICY_SOURCE]);
    const actions = Array.from(parseXmlStrictly(resolve(POLICY_SOURCE)).getElementsByTagName('action'));
    expect(actions.map((action) => action.getAttribute('id'))).toEqual([POLKIT_ACTION_ID]);
    const action = actions[0]!;
    const text = (tag: string) => Array.from(action.getElementsByTagName(tag), (element) => element.textContent?.trim());
    expect(text('message')).toEqual(['Authentication is required to write a disk image to a drive']);
    expect([...text('allow_any'), ...text('allow_inactive'), ...text('allow_active')]).toEqual(['auth_admin', 'auth_admin', 'auth_admin']);
  });

  it('names, as the program pkexec may run, the launcher the Linux packages install', () => {
    const annotation = Array.from(parseXmlStrictly(resolve(POLICY_SOURCE)).getElementsByTagName('annotate')).find(
      (element) => element.getAttribute('key') === 'org.freedesktop.policykit.exec.path',
    );
    const extraFiles = [config.linux?.extraFiles ?? []].flat() as { from: string; to: string }[];
    expect(extraFiles).toHaveLength(1);
    const launcher = extraFiles[0]!;
    // deb and rpm install the app directory as /opt/<productName> (electron-builder's installPrefix).
    expect(annotation?.textContent).toBe(`/opt/${config.productName}/${launcher.to}`);
    expect(statSync(launcher.from).mode & 0o111).toBe(0o111);
  });
});

describe('build/linux/sluice-helper, the launcher pkexec runs', () => {
  const launcherSource = readFileSync('build/linux/sluice-helper', 'utf8');
  const layout = mkdtempSync(join(tmpdir(), 'sluice-launcher-'));
  afterAll(() => rmSync(layout, { recursive: true, force: true }));

  it('passes the helper the V8 flags worker/helper/launch.ts uses', () => {
    execFileSync('sh', ['-n', 'build/linux/sluice-helper']);
    const flags = [...launcherSource.matchAll(/(?<=\s)--[a-z-]+(?:=\S+)?(?=\s)/g)].map((match) => match[0]);
    expect(flags).toEqual([...HELPER_V8_FLAGS]);
  });

  it('starts the helper from the app’s asar, and the helper answers on its channel', async () => {
    // The installed layout in miniature: /opt/Sluice/{sluice-helper, sluice, resources/app.asar}.
    // Node stands in for the Electron binary in RunAsNode mode, which is what that mode makes it;
    // the built project stands in for app.asar, which holds the same out/ tree.
    const launcher = join(layout, basename('build/linux/sluice-helper'));
    copyFileSync('build/linux/sluice-helper', launcher);
    chmodSync(launcher, 0o755);
    symlinkSync(process.execPath, join(layout, 'sluice'));
    mkdirSync(join(layout, 'resources'));
    symlinkSync(resolve('.'), join(layout, 'resources', 'app.asar'));
    expect(existsSync(join(layout, 'resources', 'app.asar', 'out', 'worker', 'helper', 'main.js'))).toBe(true);

    const result = await probeHelper(launcher, []);
    expect(result.reply).toMatchObject({ type: 'fatal', code: 'protocol-error' });
    expect(isRefusalBeforeStart(result)).toBe(true);
  });
});
