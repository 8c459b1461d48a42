import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseBmap } from '../../../user/images/formats/bmap.js';
import { MAX_BMAP_BYTES } from '../../../user/images/formats/bmap-size.js';
import { bmapWithOpenElement } from '../../support/hostile-images.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('parseBmap', () => {
  const image = join(dir, 'sparse.img');
  execFileSync('truncate', ['-s', '1M', image]);
  execFileSync('sh', [
    '-c',
    `printf 'boot' | dd of=${image} conv=notrunc status=none && printf 'data' | dd of=${image} bs=4096 seek=100 conv=notrunc status=none`,
  ]);
  execFileSync('bmaptool', ['create', '-o', `${image}.bmap`, image], { stdio: 'ignore' });
  const xml = readFileSync(`${image}.bmap`, 'utf8');

  it('reads bmaptool’s 2.0 maps: size, block size, ranges in bytes with their SHA-256', () => {
    const map = parseBmap(xml, 'sparse.img.bmap');
    expect(map).toMatchObject({
      imageSize: 1024 * 1024,
      blockSize: 4096,
      digestAlgorithm: 'sha256',
      mappedBytes: 2 * 4096,
    });
    expect(map.ranges.map((r) => [r.offset, r.length])).toEqual([
      [0, 4096],
      [100 * 4096, 4096],
    ]);
    expect(map.ranges[0]?.digest).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses a map whose own checksum does not match', () => {
    expect(() => parseBmap(xml.replace('<BlockSize> 4096', '<BlockSize> 8192'), 'edited.bmap')).toThrow(
      /edited\.bmap is not valid: its own checksum does not match/,
    );
  });

  it('reads 1.x maps (SHA-1 ranges, BmapFileSHA1)', () => {
    const v1 =
      '<?xml version="1.0" ?>\n<bmap version="1.3">\n<ImageSize> 8192 </ImageSize>\n<BlockSize> 4096 </BlockSize>\n<BlockMap>\n<Range sha1="da39a3ee5e6b4b0d3255bfef95601890afd80709"> 1 </Range>\n</BlockMap>\n</bmap>\n';
    writeFileSync(join(dir, 'v1.bmap'), v1);
    expect(parseBmap(v1, 'v1.bmap')).toMatchObject({
      digestAlgorithm: 'sha1',
      ranges: [{ offset: 4096, length: 4096, digest: 'da39a3ee5e6b4b0d3255bfef95601890afd80709' }],
    });
  });

  it('refuses ranges out of order', () => {
    const bad =
      '<bmap version="2.0"><ImageSize>8192</ImageSize><BlockSize>4096</BlockSize><Range> 1 </Range><Range> 0 </Range></bmap>';
    expect(() => parseBmap(bad, 'bad.bmap')).toThrow(/out of order/);
  });
});

describe('parseBmap: bounded by its input', () => {
  const map = (body: string) =>
    `<?xml version="1.0" ?>\n<bmap version="2.0">\n<ImageSize> 8192 </ImageSize>\n<BlockSize> 4096 </BlockSize>\n${body}</bmap>\n`;

  it('an unclosed element and thousands of spaces is refused at once (regular expressions took 21.6 s over 4,000)', () => {
    const started = performance.now();
    expect(() => parseBmap(bmapWithOpenElement(4000), 'open.bmap')).toThrow(
      /open\.bmap is not valid: it is not well-formed XML \(it ends with <bmap>, <ImageSize> still open\)/,
    );
    expect(() => parseBmap(bmapWithOpenElement(1_000_000), 'open.bmap')).toThrow(
      /open\.bmap is not valid: it has more than 4096 characters of text at character \d+/,
    );
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('a checksum value is compared, never made into a regular expression', () => {
    const started = performance.now();
    expect(() => parseBmap(map(`<BmapFileChecksum>(a+)+$${'a'.repeat(40)}</BmapFileChecksum>\n`), 'evil.bmap')).toThrow(
      /evil\.bmap is not valid: its own checksum does not match/,
    );
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('refuses a map larger than a bmap can be', () => {
    expect(() => parseBmap(map(' '.repeat(MAX_BMAP_BYTES)), 'huge.bmap')).toThrow(
      /huge\.bmap is not valid: it is larger than 16777216 bytes/,
    );
  });

  it('refuses elements nested past any bmap’s depth', () => {
    expect(() => parseBmap(map('<a>'.repeat(1000)), 'deep.bmap')).toThrow(
      /deep\.bmap is not valid: it is not well-formed XML \(Maximum nested tags exceeded\)/,
    );
  });

  it('refuses, before parsing, what would make the parser build hundreds of MB', () => {
    // Each of these took 650-910 MB through fast-xml-parser at 16 MiB (2 MB for the attributes).
    const started = performance.now();
    expect(() => parseBmap(map('<a/>'.repeat(4_000_000)), 'many.bmap')).toThrow(
      /many\.bmap is not valid: it has more than 131072 elements and attributes/,
    );
    expect(() => parseBmap(map(`<a>${'x'.repeat(MAX_BMAP_BYTES - 200)}</a>`), 'text.bmap')).toThrow(
      /text\.bmap is not valid: it has more than 4096 characters of text at character \d+/,
    );
    expect(() => parseBmap(map(`<a ${'b '.repeat(1_000_000)}/>`), 'tag.bmap')).toThrow(
      /tag\.bmap is not valid: it has a tag of more than 1024 characters at character \d+/,
    );
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('refuses a repeated element, a count its ranges do not add up to, and a range checksum of the wrong length', () => {
    expect(() => parseBmap(map('<ImageSize> 4096 </ImageSize>'), 'twice.bmap')).toThrow(
      /twice\.bmap is not valid: it has more than one <ImageSize>/,
    );
    expect(() =>
      parseBmap(map('<MappedBlocksCount> 2 </MappedBlocksCount><BlockMap><Range> 1 </Range></BlockMap>'), 'count.bmap'),
    ).toThrow(/count\.bmap is not valid: it declares 2 mapped blocks, but its ranges map 1/);
    expect(() => parseBmap(map('<BlockMap><Range chksum="abcd"> 1 </Range></BlockMap>'), 'short.bmap')).toThrow(
      /short\.bmap is not valid: range 1 has a checksum that is not a SHA256 digest/,
    );
  });

  it('reads a map without a file checksum, its ranges in <BlockMap>', () => {
    expect(
      parseBmap(
        map(
          `<MappedBlocksCount> 2 </MappedBlocksCount><BlockMap><Range chksum="${'ab'.repeat(32)}"> 0-1 </Range></BlockMap>`,
        ),
        'ok.bmap',
      ),
    ).toMatchObject({
      imageSize: 8192,
      mappedBytes: 8192,
      ranges: [{ offset: 0, length: 8192, digest: 'ab'.repeat(32) }],
    });
  });
});
