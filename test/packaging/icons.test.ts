/**
 * The committed icons are what assets/icon.svg renders to today, and each container holds the
 * sizes its OS asks for. The containers are read back here by independent code: a writer bug
 * and a matching reader bug would have to agree to slip through.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILD_RESOURCES, ICON_SVG_PATH, iconFiles, LINUX_ICON_SIZES } from '../../build/scripts/generate-icons.js';
import { loadBuilderConfig } from '../../build/scripts/builder-config.js';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function pngSize(png: Buffer): { width: number; height: number } {
  expect(png.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
  expect(png.toString('latin1', 12, 16)).toBe('IHDR');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

/** Element type → pixel side of the PNG it holds, with the lengths checked against the file. */
function icnsElements(file: Buffer): Map<string, number> {
  expect(file.toString('latin1', 0, 4)).toBe('icns');
  expect(file.readUInt32BE(4)).toBe(file.length);
  const elements = new Map<string, number>();
  for (let offset = 8; offset < file.length;) {
    const length = file.readUInt32BE(offset + 4);
    const { width, height } = pngSize(file.subarray(offset + 8, offset + length));
    expect(width).toBe(height);
    elements.set(file.toString('latin1', offset, offset + 4), width);
    offset += length;
  }
  return elements;
}

/** Every image's side in an .ico, read from its directory entry and checked against its payload. */
function icoSizes(file: Buffer): number[] {
  expect(file.readUInt16LE(0)).toBe(0);
  expect(file.readUInt16LE(2)).toBe(1);
  const count = file.readUInt16LE(4);
  return Array.from({ length: count }, (_, index) => {
    const entry = 6 + 16 * index;
    const side = file.readUInt8(entry) || 256;
    const payload = file.subarray(
      file.readUInt32LE(entry + 12),
      file.readUInt32LE(entry + 12) + file.readUInt32LE(entry + 8),
    );
    if (payload.subarray(0, 8).equals(PNG_SIGNATURE)) {
      expect(pngSize(payload)).toEqual({ width: side, height: side });
    } else {
      // BITMAPINFOHEADER: the height counts the image and its mask.
      expect([
        payload.readUInt32LE(0),
        payload.readInt32LE(4),
        payload.readInt32LE(8),
        payload.readUInt16LE(14),
      ]).toEqual([40, side, 2 * side, 32]);
    }
    return side;
  });
}

describe('app icons', () => {
  it('are what assets/icon.svg renders to (run `npm run build:icons` after editing it)', () => {
    for (const [path, bytes] of iconFiles(readFileSync(ICON_SVG_PATH, 'utf8'))) {
      const committed = join(BUILD_RESOURCES, path);
      expect(existsSync(committed), `${committed} is missing`).toBe(true);
      expect(readFileSync(committed).equals(bytes), `${committed} differs from the SVG's rendering`).toBe(true);
    }
  });

  it('give Linux a PNG for every size from 16 to 1024 px, each as large as its name says', () => {
    const config = loadBuilderConfig();
    const directory = join(BUILD_RESOURCES, config.linux!.icon!);
    expect(readdirSync(directory).sort()).toEqual(LINUX_ICON_SIZES.map((size) => `${size}x${size}.png`).sort());
    for (const size of [16, 24, 32, 48, 64, 128, 256, 512, 1024]) {
      expect(pngSize(readFileSync(join(directory, `${size}x${size}.png`)))).toEqual({ width: size, height: size });
    }
  });

  it('give macOS an .icns with every Finder size at 1x and 2x, 16 to 1024 px', () => {
    const config = loadBuilderConfig();
    const elements = icnsElements(readFileSync(join(BUILD_RESOURCES, config.mac!.icon!)));
    expect(Object.fromEntries(elements)).toEqual({
      icp4: 16,
      ic11: 32,
      icp5: 32,
      ic12: 64,
      ic07: 128,
      ic13: 256,
      ic08: 256,
      ic14: 512,
      ic09: 512,
      ic10: 1024,
    });
  });

  it('give Windows an .ico from 16 to 256 px (electron-builder refuses one without 256)', () => {
    const config = loadBuilderConfig();
    expect(icoSizes(readFileSync(join(BUILD_RESOURCES, config.win!.icon!)))).toEqual([16, 24, 32, 48, 64, 128, 256]);
  });
});
