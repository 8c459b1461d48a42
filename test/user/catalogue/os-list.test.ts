import { describe, expect, it } from 'vitest';
import type { CatalogueCategory, CatalogueOs } from '../../../common/domain/catalogue.js';
import { MiB } from '../../../common/domain/units.js';
import { MAX_DEPTH, MAX_DOCUMENT_BYTES, parseOsList } from '../../../user/catalogue/os-list.js';

const SHA_A = 'a'.repeat(64);
const SHA_B = 'B'.repeat(64);

/** An entry as Raspberry Pi's os_list v4 writes one. */
function os(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    description: `${name}, for the tests`,
    icon: 'icons/os.png',
    url: `https://images.example/${name.replace(/\W+/g, '-')}.img.xz`,
    extract_size: 4 * 1024 * MiB,
    extract_sha256: SHA_A,
    image_download_size: 1024 * MiB,
    image_download_sha256: SHA_B,
    release_date: '2026-11-19',
    devices: ['pi5-64bit', 'pi4-64bit'],
    init_format: 'systemd',
    architecture: 'armv8',
    capabilities: ['rpi_connect'],
    ...extra,
  };
}

function parse(document: unknown, source = 'https://lists.example/os_list_v4.json', depth = 0) {
  return parseOsList(Buffer.from(JSON.stringify(document)), { source, depth });
}

describe('parseOsList: os_list v4, checked entry by entry', () => {
  it('reads every field an entry and a board carry, with addresses made absolute against the document', () => {
    const document = parse({
      imager: {
        latest_version: '2.0.3',
        devices: [
          {
            name: 'Raspberry Pi 5',
            description: 'The latest',
            tags: ['pi5-64bit', 'pi5-32bit'],
            icon: 'icons/pi5.png',
            matching_type: 'inclusive',
            architecture: 'armv8',
            default: false,
          },
          { name: 'Raspberry Pi 4', description: 'Models B, 400', tags: ['pi4-64bit'] },
        ],
      },
      os_list: [os('Raspberry Pi OS Lite (64-bit)', { website: '/about', bmap_url: 'lite.bmap' })],
    });
    expect(document.notes).toEqual([]);
    expect(document.boards).toEqual([
      {
        name: 'Raspberry Pi 5',
        description: 'The latest',
        icon: 'https://lists.example/icons/pi5.png',
        tags: ['pi5-64bit', 'pi5-32bit'],
        matchingType: 'inclusive',
        architecture: 'armv8',
      },
      {
        name: 'Raspberry Pi 4',
        description: 'Models B, 400',
        icon: null,
        tags: ['pi4-64bit'],
        matchingType: 'exclusive',
        architecture: null,
      },
    ]);
    expect(document.items).toEqual([
      {
        kind: 'os',
        name: 'Raspberry Pi OS Lite (64-bit)',
        description: 'Raspberry Pi OS Lite (64-bit), for the tests',
        icon: 'https://lists.example/icons/os.png',
        url: 'https://images.example/Raspberry-Pi-OS-Lite-64-bit-.img.xz',
        releaseDate: '2026-11-19',
        extractSize: 4 * 1024 * MiB,
        extractSha256: SHA_A,
        downloadSize: 1024 * MiB,
        downloadSha256: SHA_B.toLowerCase(),
        devices: ['pi5-64bit', 'pi4-64bit'],
        initFormat: 'systemd',
        architecture: 'armv8',
        website: 'https://lists.example/about',
        bmapUrl: 'https://lists.example/lite.bmap',
      } satisfies CatalogueOs,
    ]);
  });

  it('reads categories inline and by subitems_url, leaving the latter unread', () => {
    const document = parse({
      os_list: [
        {
          name: 'Other',
          description: 'More',
          icon: 'other.png',
          subitems: [os('Inside'), { name: 'Deeper', description: 'Even more', subitems: [os('Deepest')] }],
        },
        { name: 'Remote', description: 'Elsewhere', subitems_url: 'sub/remote.json' },
      ],
    });
    expect(document.notes).toEqual([]);
    const [other, remote] = document.items as CatalogueCategory[];
    expect(other?.items?.map((i) => i.name)).toEqual(['Inside', 'Deeper']);
    expect((other?.items?.[1] as CatalogueCategory).items?.map((i) => i.name)).toEqual(['Deepest']);
    expect(remote).toMatchObject({
      kind: 'category',
      items: null,
      subitemsUrl: 'https://lists.example/sub/remote.json',
      icon: null,
    });
  });

  it('a catalogue read over https may name no http image, icon or sub-document: each is skipped with the reason', () => {
    const document = parse({
      os_list: [
        os('Secure'),
        os('Plain image', { url: 'http://lists.example/plain.img.xz' }),
        os('Plain icon', { icon: 'http://lists.example/plain.png' }),
        { name: 'Plain list', description: 'x', subitems_url: 'http://lists.example/sub.json' },
      ],
    });
    expect(document.items.map((i) => i.name)).toEqual(['Secure']);
    const why = (field: string, url: string) =>
      `${field}: ${url} is plain http, in a catalogue read over https; its publisher must give an https address.`;
    expect(document.notes).toEqual([
      expect.stringContaining(why('url', 'http://lists.example/plain.img.xz')),
      expect.stringContaining(why('icon', 'http://lists.example/plain.png')),
      expect.stringContaining(why('subitems_url', 'http://lists.example/sub.json')),
    ]);
    // Over http, the same addresses are what the catalogue can give.
    expect(
      parse(
        { os_list: [os('Plain image', { url: 'http://lists.example/plain.img.xz' })] },
        'http://lists.example/os_list_v4.json',
      ).items,
    ).toHaveLength(1);
  });

  it('skips an entry that does not match the schema, with a note naming it and the field, and keeps the rest', () => {
    const document = parse({
      imager: {
        devices: [
          { name: 'No tags', description: 'x' },
          { name: 'Good', description: 'y', tags: ['good'] },
        ],
      },
      os_list: [
        os('Good one'),
        os('Bad checksum', { extract_sha256: 'not-hex' }),
        os('Negative size', { image_download_size: -1 }),
        {
          name: 'No url',
          description: 'x',
          extract_size: 1,
          extract_sha256: SHA_A,
          image_download_size: 1,
          release_date: '2026-01-01',
        },
        'a string',
        os('Bad icon', { icon: 'javascript:alert(1)' }),
        {
          name: 'Category',
          description: 'with one bad entry',
          subitems: [os('Fine'), os('Broken', { devices: 'pi5' })],
        },
      ],
    });
    expect(document.items.map((i) => i.name)).toEqual(['Good one', 'Category']);
    expect((document.items[1] as CatalogueCategory).items?.map((i) => i.name)).toEqual(['Fine']);
    expect(document.boards.map((b) => b.name)).toEqual(['Good']);
    const where = 'https://lists.example/os_list_v4.json';
    expect(document.notes).toEqual([
      `${where}: os_list[1] ("Bad checksum") skipped: extract_sha256: Invalid SHA-256: expected 64 hexadecimal digits.`,
      `${where}: os_list[2] ("Negative size") skipped: image_download_size: Invalid value: Expected >=0 but received -1.`,
      `${where}: os_list[3] ("No url") skipped: url: missing.`,
      `${where}: os_list[4] skipped: not an object.`,
      `${where}: os_list[5] ("Bad icon") skipped: icon: javascript: addresses are not allowed here (http or https only, from a catalogue on a server).`,
      `${where}: os_list[6].subitems[1] ("Broken") skipped: devices: Invalid type: Expected Array but received "pi5".`,
      `${where}: board imager.devices[0] ("No tags") skipped: tags: missing.`,
    ]);
  });

  it('takes file: addresses only from a local file (a .rpi-imager-manifest made by create_local_json.py)', () => {
    const manifest = {
      os_list: [
        os('Local', { url: 'file:///srv/images/local.img.xz', icon: 'file:///srv/icons/local.png' }),
        os('Relative', { url: 'images/relative.img.xz' }),
      ],
    };
    const local = parse(manifest, '/home/pi/os_list_local.rpi-imager-manifest');
    expect(local.notes).toEqual([]);
    expect(local.items.map((i) => (i as CatalogueOs).url)).toEqual([
      '/srv/images/local.img.xz',
      '/home/pi/images/relative.img.xz',
    ]);
    expect(local.items[0]?.icon).toBe('file:///srv/icons/local.png');
    const remote = parse(manifest);
    expect(remote.items.map((i) => i.name)).toEqual(['Relative']);
    expect(remote.notes[0]).toMatch(
      /"Local"\) skipped: url: file: addresses are not allowed here \(http or https only, from a catalogue on a server\)/,
    );
  });

  it('reads init_format as a hint: Imager’s empty string is none, and a format it does not know is no hint, with a note', () => {
    const document = parse({
      os_list: [
        os('Empty', { init_format: '' }),
        os('Cloud', { init_format: 'cloudinit-rpi' }),
        os('Future', { init_format: 'ignition' }),
        os('Unset', { init_format: undefined }),
      ],
    });
    expect(document.items.map((i) => (i as CatalogueOs).initFormat)).toEqual(['none', 'cloudinit-rpi', null, null]);
    expect(document.notes).toEqual([
      'https://lists.example/os_list_v4.json: "Future" names an init_format Sluice does not know ("ignition"): it is listed without a customisation hint.',
    ]);
  });

  it(`refuses categories nested deeper than ${MAX_DEPTH} levels, counting the document's own depth`, () => {
    let deepest: unknown = os('Bottom');
    for (let level = 0; level < MAX_DEPTH; level++)
      deepest = { name: `Level ${MAX_DEPTH - level}`, description: '', subitems: [deepest] };
    const document = parse({ os_list: [deepest] });
    // Fifteen categories hold the sixteenth level; the sixteenth category would open a seventeenth.
    let item = document.items[0] as CatalogueCategory;
    let levels = 1;
    while (item.items?.[0]?.kind === 'category') {
      item = item.items[0];
      levels += 1;
    }
    expect(levels).toBe(MAX_DEPTH - 1);
    expect(item.items).toEqual([]);
    expect(document.notes[0]).toMatch(/\("Level 16"\) skipped: categories nest deeper than 16 levels\.$/);
    // A document read through subitems_url at depth 15 can hold entries, but no category.
    const deep = parse(
      { os_list: [os('Leaf'), { name: 'Too deep', description: '', subitems_url: 'x.json' }] },
      'https://lists.example/deep.json',
      MAX_DEPTH - 1,
    );
    expect(deep.items.map((i) => i.name)).toEqual(['Leaf']);
    expect(deep.boards).toEqual([]);
  });

  it('refuses a whole document that is too large, not JSON, or not an os_list, saying which', () => {
    const source = 'https://lists.example/x.json';
    expect(() => parseOsList(Buffer.alloc(MAX_DOCUMENT_BYTES + 1, 0x20), { source, depth: 0 })).toThrow(
      /The catalogue https:\/\/lists.example\/x.json is larger than 1 MiB/,
    );
    expect(() => parseOsList(Buffer.from('<html>Not found</html>'), { source, depth: 0 })).toThrow(
      /is not JSON: Unexpected token/,
    );
    expect(() => parse({ os_list: {} }, source)).toThrow(
      /is not an OS list \(os_list v4\): os_list: Invalid type: Expected Array/,
    );
    expect(() => parse([1, 2], source)).toThrow(/is not an OS list/);
  });

  it('keeps 100 notes and counts the rest, however many entries a document gets wrong', () => {
    const document = parse({ os_list: Array.from({ length: 5000 }, () => ({})) });
    expect(document.items).toEqual([]);
    expect(document.notes).toHaveLength(101);
    expect(document.notes[100]).toBe('… and 4900 more entries skipped.');
  });

  it('reads 1 MiB of nested arrays in an unknown field without recursing into them', () => {
    const nested = `${'['.repeat(400_000)}${']'.repeat(400_000)}`;
    const text = `{"os_list":[{"name":"x","description":"","url":"https://a/x.img","extract_size":1,"extract_sha256":"${SHA_A}","image_download_size":1,"release_date":"","junk":${nested}}]}`;
    const document = parseOsList(Buffer.from(text), { source: 'https://lists.example/deep.json', depth: 0 });
    expect(document.items.map((i) => i.name)).toEqual(['x']);
  });
});
