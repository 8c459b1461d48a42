/**
 * Reads the fuses of a packaged Sluice's Electron binary and compares them with electron-builder.yml:
 *
 *   node out/build/scripts/check-fuses.js UNPACKED_DIR [linux|darwin|win32]
 *
 * UNPACKED_DIR is electron-builder's unpacked app (dist/linux-unpacked, dist/mac-arm64,
 * dist/win-unpacked). The fuses decide, among other things, that no NODE_OPTIONS reach the
 * binary the privileged helper runs on (build/HELPER.md): a build that lost them must not ship.
 * The release workflow runs this after `npm run dist`, on the real binary;
 * test/packaging/package-layout.test.ts runs it on a stand-in with the same fuse wire.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FuseV1Options, getCurrentFuseWire } from '@electron/fuses';
import { loadBuilderConfig } from './builder-config.js';

/** Where electron-builder puts the app's executable in its unpacked directory. */
export function appBinary(unpackedDir: string, platform: NodeJS.Platform): string {
  const config = loadBuilderConfig();
  const product = config.productName ?? 'Sluice';
  if (platform === 'darwin') return join(unpackedDir, `${product}.app`, 'Contents', 'MacOS', product);
  if (platform === 'win32') return join(unpackedDir, `${product}.exe`);
  return join(unpackedDir, config.linux?.executableName ?? product.toLowerCase());
}

/** Every fuse whose state in `binary` differs from electron-builder.yml's electronFuses, as a sentence; empty when all agree. */
export async function fuseMismatches(binary: string): Promise<string[]> {
  const { resetAdHocDarwinSignature: _notAFuse, ...fuses } = loadBuilderConfig().electronFuses ?? {};
  const wire = await getCurrentFuseWire(binary);
  const mismatches: string[] = [];
  for (const [name, enabled] of Object.entries(fuses)) {
    const option = FuseV1Options[(name[0]?.toUpperCase() + name.slice(1)) as keyof typeof FuseV1Options];
    if (option === undefined) {
      mismatches.push(`${name}: electron-builder.yml names a fuse this Electron does not have`);
      continue;
    }
    // The wire stores each fuse as the character '1' (on) or '0' (off).
    const actual = String.fromCharCode(wire[option] as number);
    if (actual !== (enabled ? '1' : '0'))
      mismatches.push(
        `${name}: the binary has it ${actual === '1' ? 'on' : 'off'}, electron-builder.yml says ${enabled ? 'on' : 'off'}`,
      );
  }
  return mismatches;
}

async function main(): Promise<void> {
  const [dir, platform = process.platform] = process.argv.slice(2);
  if (dir === undefined) throw new Error('usage: check-fuses.js UNPACKED_DIR [linux|darwin|win32]');
  const binary = appBinary(dir, platform as NodeJS.Platform);
  if (!existsSync(binary)) {
    process.stderr.write(`check-fuses: there is no Electron binary at ${binary}: nothing was built there.\n`);
    process.exit(1);
  }
  const mismatches = await fuseMismatches(binary);
  for (const line of mismatches) process.stderr.write(`check-fuses: ${line}\n`);
  process.stdout.write(mismatches.length === 0 ? `${binary}: every fuse as electron-builder.yml sets it.\n` : '');
  process.exit(mismatches.length === 0 ? 0 : 1);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
