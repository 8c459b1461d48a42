/**
 * Renders assets/icon.svg into every icon the installers need (run: `npm run build:icons`):
 *   build/icons/NxN.png  Linux (AppImage, deb, rpm install them into the hicolor theme)
 *   build/icon.icns      macOS app bundle and dmg
 *   build/icon.ico       Windows executable, installer and uninstaller
 * The outputs are committed so that packaging needs no rasteriser; test/packaging/icons.test.ts
 * fails when they and the SVG disagree.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Resvg } from '@resvg/resvg-js';
import { encodeIcns, encodeIco, ICNS_TYPES, ICO_SIZES, type IconImage } from './icon-containers.js';

/** Paths from the package root, where npm runs scripts and vitest runs tests. */
export const ICON_SVG_PATH = resolve('assets/icon.svg');
export const BUILD_RESOURCES = resolve('build');

/** The Linux icon theme sizes, 16 to 1024 px (hicolor's own list, plus 1024 for HiDPI launchers). */
export const LINUX_ICON_SIZES: readonly number[] = [16, 24, 32, 48, 64, 128, 256, 512, 1024];

export function renderIcon(svg: string, size: number): IconImage {
  const rendered = new Resvg(svg, { fitTo: { mode: 'width', value: size } }).render();
  if (rendered.width !== size || rendered.height !== size) {
    throw new Error(
      `assets/icon.svg rendered at ${rendered.width}×${rendered.height} for ${size} px; it must be square.`,
    );
  }
  return { size, png: rendered.asPng(), rgba: rendered.pixels };
}

/** Every icon file, by path under build/, rendered from the SVG source text. */
export function iconFiles(svg: string): Map<string, Buffer> {
  const sizes = [...new Set([...LINUX_ICON_SIZES, ...ICO_SIZES, ...ICNS_TYPES.map(({ size }) => size)])];
  const images = sizes.map((size) => renderIcon(svg, size));
  const files = new Map<string, Buffer>();
  for (const size of LINUX_ICON_SIZES) {
    files.set(`icons/${size}x${size}.png`, images.find((image) => image.size === size)!.png);
  }
  files.set('icon.icns', encodeIcns(images));
  files.set('icon.ico', encodeIco(images));
  return files;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const [path, bytes] of iconFiles(readFileSync(ICON_SVG_PATH, 'utf8'))) {
    const target = join(BUILD_RESOURCES, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, bytes);
    process.stdout.write(`wrote ${target} (${bytes.length} bytes)\n`);
  }
}
