import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseBmap } from '../../../user/images/bmap.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('parseBmap', () => {
  const image = join(dir, 'sparse.img');
  execFileSync('truncate', ['-s', '1M', image]);
  execFileSync('sh', ['-c', `printf 'boot' | dd of=${image} conv=notrunc status=none && printf 'data' | dd of=${image} bs=4096 seek=100 conv=notrunc status=none`]);
  execFileSync('bmaptool', ['create', '-o', `${image}.bmap`, image], { stdio: 'ignore' });
  const xml = readFileSync(`${image}.bmap`, 'utf8');

  it('reads bmaptool’s 2.0 maps: size, block size, ranges in bytes with their SHA-256', () => {
    const map = parseBmap(xml, 'sparse.img.bmap');
    expect(map).toMatchObject({ imageSize: 1024 * 1024, blockSize: 4096, digestAlgorithm: 'sha256', mappedBytes: 2 * 4096 });
    expect(map.ranges.map((r) => [r.offset, r.length])).toEqual([
      [0, 4096],
      [100 * 4096, 4096],
    ]);
    expect(map.ranges[0]?.digest).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses a map whose own checksum does not match', () => {
    expect(() => parseBmap(xml.replace('<BlockSize> 4096', '<BlockSize> 8192'), 'edited.bmap')).toThrow(/edited\.bmap is not valid: its own checksum does not match/);
  });

  it('reads 1.x maps (SHA-1 ranges, BmapFileSHA1)', () => {
    const v1 = '<?xml version="1.0" ?>\n<bmap version="1.3">\n<ImageSize> 8192 </ImageSize>\n<BlockSize> 4096 </BlockSize>\n<BlockMap>\n<Range sha1="da39a3ee5e6b4b0d3255bfef95601890afd80709"> 1 </Range>\n</BlockMap>\n</bmap>\n';
    writeFileSync(join(dir, 'v1.bmap'), v1);
    expect(parseBmap(v1, 'v1.bmap')).toMatchObject({ digestAlgorithm: 'sha1', ranges: [{ offset: 4096, length: 4096, digest: 'da39a3ee5e6b4b0d3255bfef95601890afd80709' }] });
  });

  it('refuses ranges out of order', () => {
    const bad = '<bmap version="2.0"><ImageSize>8192</ImageSize><BlockSize>4096</BlockSize><Range> 1 </Range><Range> 0 </Range></bmap>';
    expect(() => parseBmap(bad, 'bad.bmap')).toThrow(/out of order/);
  });
});
