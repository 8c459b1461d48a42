import { describe, expect, it } from 'vitest';
import { checksumFor } from '../../../../user/images/files/checksums.js';

const A = 'a'.repeat(64);
const B = 'B'.repeat(64);

describe('checksumFor: the SHA-256 a checksum list gives an image', () => {
  it('reads sha256sum lines, text and binary mode, with paths', () => {
    expect(checksumFor(`${A}  other.img\n${B} *images/raspios.img.xz\n`, 'raspios.img.xz')).toBe('b'.repeat(64));
  });
  it('reads BSD-style tagged lines', () => {
    expect(checksumFor(`SHA256 (raspios.img.xz) = ${A}\n`, 'raspios.img.xz')).toBe(A);
  });
  it('takes a lone digest as the file’s own', () => {
    expect(checksumFor(`${A}\n`, 'anything.img')).toBe(A);
  });
  it('gives nothing for a list that does not name the image', () => {
    expect(checksumFor(`${A}  one.img\n${B}  two.img\n`, 'three.img')).toBeNull();
  });
});
