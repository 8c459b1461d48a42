import { describe, expect, it } from 'vitest';
import { detectFormat } from '../../../../user/images/formats/detect-format.js';

const bytes = (...b: number[]) => Uint8Array.from(b);

describe('detectFormat: magic bytes, never the extension', () => {
  it.each([
    ['gzip', bytes(0x1f, 0x8b, 0x08, 0x00)],
    ['xz', bytes(0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 0x00)],
    ['bzip2', bytes(0x42, 0x5a, 0x68, 0x39)],
    ['zstd', bytes(0x28, 0xb5, 0x2f, 0xfd, 0x04)],
    ['zip', bytes(0x50, 0x4b, 0x03, 0x04, 0x14)],
    ['qcow2', bytes(0x51, 0x46, 0x49, 0xfb, 0x00, 0x00, 0x00, 0x03)],
  ])('%s', (format, head) => {
    expect(detectFormat(head, null)).toBe(format);
  });

  it('dmg by its koly trailer', () => {
    expect(detectFormat(bytes(0x00, 0x01), bytes(0x6b, 0x6f, 0x6c, 0x79, 0, 0, 0, 4))).toBe('dmg');
  });

  it('anything else is a raw disk image, including an MBR and near-misses', () => {
    const mbr = new Uint8Array(512);
    mbr[510] = 0x55;
    mbr[511] = 0xaa;
    expect(detectFormat(mbr, mbr)).toBe('raw');
    expect(detectFormat(bytes(0x1f), null)).toBe('raw');
    expect(detectFormat(bytes(0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x01), null)).toBe('raw');
  });
});
