import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogueCategory, CatalogueOs } from '../../../common/domain/catalogue.js';
import { MiB } from '../../../common/domain/units.js';
import { builtCatalogueLaunch } from '../../support/built-modules.js';
import { serveCatalogue, tinyPng, type CatalogueServer } from '../../support/catalogue.js';
import { serve } from '../../support/file-server.js';
import { iconFileName } from '../../../user/catalogue/icon-files.js';

const { checkedCatalogue, readCatalogueInChild } = await builtCatalogueLaunch();

let dir: string;
let server: CatalogueServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-catalogue-'));
  server = await serveCatalogue(dir);
});

afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const names = (items: readonly { name: string; kind: string; items?: unknown }[]): unknown[] =>
  items.map((i) =>
    i.kind === 'category' ? { [i.name]: i.items === null ? 'unread' : names(i.items as never) } : i.name,
  );

describe('readCatalogueInChild: a catalogue read in its own process', () => {
  it('reads the top document only, until a category is opened; the malformed entry and board are skipped with notes', async () => {
    const before = server.requests();
    const document = await readCatalogueInChild({
      source: server.top,
      depth: 0,
      expand: false,
      savedDir: null,
      localNetwork: true,
    });
    expect(server.requests() - before).toBe(1);
    expect(document.offline).toBeNull();
    expect(document.boards.map((b) => [b.name, b.tags, b.matchingType])).toEqual([
      ['Board A', ['board-a', 'board-a-64'], 'exclusive'],
      ['Board B', ['board-b'], 'inclusive'],
    ]);
    expect(names(document.items)).toEqual([
      'Test OS Lite',
      { 'Other systems': 'unread' },
      { Generic: ['Test OS Generic'] },
    ]);
    expect(document.notes).toEqual([
      `${server.top}: os_list[2] ("Broken entry") skipped: extract_sha256: Invalid SHA-256: expected 64 hexadecimal digits.`,
      `${server.top}: board imager.devices[2] ("Board without tags") skipped: tags: missing.`,
    ]);
    const lite = document.items[0] as CatalogueOs;
    expect(lite).toMatchObject({
      url: `${server.base}/images/lite.img.xz`,
      icon: `${server.base}/icons/lite.png`,
      downloadSha256: server.images.lite.downloadSha256,
      extractSha256: server.images.lite.extractSha256,
    });
    // Opened later: the category's own document, one level down.
    const other = document.items[1] as CatalogueCategory;
    const opened = await readCatalogueInChild({
      source: other.subitemsUrl ?? '',
      depth: 1,
      expand: false,
      savedDir: null,
      localNetwork: true,
    });
    expect(names(opened.items)).toEqual(['Test OS Desktop', { Rescue: 'unread' }]);
    expect(opened.items[0]?.icon).toBe(`${server.base}/icons/desktop.png`);
    expect(opened.boards).toEqual([]);
  });

  it('reads the whole tree when asked to, each document once', async () => {
    const other = server.requestsFor('/lists/other.json');
    const rescue = server.requestsFor('/lists/rescue.json');
    const document = await readCatalogueInChild({
      source: server.top,
      depth: 0,
      expand: true,
      savedDir: null,
      localNetwork: true,
    });
    expect(names(document.items)).toEqual([
      'Test OS Lite',
      { 'Other systems': ['Test OS Desktop', { Rescue: ['Test OS Rescue'] }] },
      { Generic: ['Test OS Generic'] },
    ]);
    expect(server.requestsFor('/lists/other.json') - other).toBe(1);
    expect(server.requestsFor('/lists/rescue.json') - rescue).toBe(1);
    expect(document.notes).toHaveLength(2);
  });

  it('shows the saved copy when the server cannot be reached, marked offline with the reason', async () => {
    const saved = join(dir, 'saved');
    const own = await serve((request, response) => {
      if (request.url === '/list.json')
        return void response
          .writeHead(200)
          .end(JSON.stringify({ os_list: [{ name: 'Sub', description: '', subitems_url: 'sub.json' }] }));
      if (request.url === '/sub.json') return void response.writeHead(200).end(JSON.stringify({ os_list: [] }));
      response.writeHead(404).end();
    });
    const source = `${own.base}/list.json`;
    const online = await readCatalogueInChild({ source, depth: 0, expand: true, savedDir: saved, localNetwork: true });
    expect(online.offline).toBeNull();
    await own.close();
    const offline = await readCatalogueInChild({ source, depth: 0, expand: true, savedDir: saved, localNetwork: true });
    expect(offline.items).toEqual(online.items);
    expect(offline.offline?.reason).toMatch(/the server refused the connection/);
    expect(offline.offline?.savedAt).toBeGreaterThan(Date.now() - 60_000);
    // Nothing saved for it: the failure is the answer.
    await expect(
      readCatalogueInChild({
        source: `${own.base}/never.json`,
        depth: 0,
        expand: false,
        savedDir: saved,
        localNetwork: true,
      }),
    ).rejects.toThrow(/the server refused the connection\. No copy of this catalogue was saved for use offline\./);
  });

  it('refuses a document over 1 MiB before parsing it, and a file that is not there', async () => {
    const large = await serve((_request, response) =>
      response.writeHead(200, { 'Content-Length': 2 * MiB }).end(Buffer.alloc(2 * MiB, 0x20)),
    );
    try {
      await expect(
        readCatalogueInChild({
          source: `${large.base}/big.json`,
          depth: 0,
          expand: false,
          savedDir: null,
          localNetwork: true,
        }),
      ).rejects.toThrow(/big\.json is larger than 1048576 bytes/);
    } finally {
      await large.close();
    }
    await expect(
      readCatalogueInChild({
        source: join(dir, 'absent.json'),
        depth: 0,
        expand: false,
        savedDir: null,
        localNetwork: true,
      }),
    ).rejects.toThrow(/absent\.json does not exist/);
  });

  it('reads a local file, as a .rpi-imager-manifest is read', async () => {
    const document = await readCatalogueInChild({
      source: join(dir, 'os_list_v4.json'),
      depth: 0,
      expand: false,
      savedDir: null,
      localNetwork: true,
    });
    // Its addresses are read against the file now: "/images/lite.img.xz" is a path on this computer.
    expect((document.items[0] as CatalogueOs).url).toBe('/images/lite.img.xz');
    expect(document.items[0]?.icon).toBe('file:///icons/lite.png');
  });
});

describe('catalogue icons: fetched by the catalogue process, kept only when they are images', () => {
  it('keeps each icon once, by its address; skips one that is not an image, or too large; fetches nothing when offline', async () => {
    const png = tinyPng([10, 20, 30]);
    let iconRequests = 0;
    const own = await serve((request, response) => {
      if (request.url === '/list.json') {
        const os = (name: string, icon: string) => ({
          name,
          description: '',
          icon,
          url: '/x.img.xz',
          extract_size: 1,
          extract_sha256: 'a'.repeat(64),
          image_download_size: 1,
          release_date: '2026-11-01',
        });
        const items = [
          os('Png', '/png.png'),
          os('Html', '/page.png'),
          os('Huge', '/huge.png'),
          os('Svg', '/icon.svg'),
          os('Same', '/png.png'),
        ];
        return void response.writeHead(200).end(JSON.stringify({ os_list: items }));
      }
      iconRequests += 1;
      if (request.url === '/png.png') return void response.writeHead(200).end(png);
      if (request.url === '/page.png')
        return void response.writeHead(200).end('<html><script>alert(1)</script></html>');
      if (request.url === '/huge.png')
        return void response.writeHead(200).end(Buffer.concat([png, Buffer.alloc(300 * 1024)]));
      if (request.url === '/icon.svg')
        return void response
          .writeHead(200)
          .end('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
      response.writeHead(404).end();
    });
    const icons = join(dir, 'icons');
    const saved = join(dir, 'saved-for-icons');
    const source = `${own.base}/list.json`;
    const request = { source, depth: 0, expand: false, savedDir: saved, localNetwork: true, iconsDir: icons };
    try {
      await readCatalogueInChild(request);
      expect(iconRequests).toBe(4);
      expect(readdirSync(icons)).toEqual([iconFileName(`${own.base}/png.png`)]);
      expect(readFileSync(join(icons, iconFileName(`${own.base}/png.png`))).equals(png)).toBe(true);
      // Read again: the icon it holds is not asked for again.
      await readCatalogueInChild(request);
      expect(iconRequests).toBe(7);
    } finally {
      await own.close();
    }
    const offline = await readCatalogueInChild(request);
    expect(offline.offline).not.toBeNull();
    expect(existsSync(join(icons, iconFileName(`${own.base}/png.png`)))).toBe(true);
  });
});

describe('checkedCatalogue: what the app and the CLI take from the catalogue process', () => {
  const request = { source: 'https://x/list.json', depth: 0, expand: false, savedDir: null, localNetwork: true };
  const document = { source: request.source, boards: [], items: [], notes: [], offline: null };

  it('takes a well-formed answer about the document asked for', () => {
    expect(checkedCatalogue(request, { type: 'document', document })).toEqual(document);
  });

  it('refuses an answer about another document, one of the wrong shape, and one nested too deep', () => {
    expect(
      checkedCatalogue(request, { type: 'document', document: { ...document, source: 'https://y/list.json' } }),
    ).toMatchObject({ failure: { code: 'protocol-error' } });
    expect(
      checkedCatalogue(request, { type: 'document', document: { ...document, items: [{ kind: 'os', name: 'x' }] } }),
    ).toMatchObject({ failure: { code: 'protocol-error' } });
    let deep: unknown = [];
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(checkedCatalogue(request, { type: 'document', document: { ...document, items: deep } })).toMatchObject({
      failure: { code: 'protocol-error', message: expect.stringMatching(/nested deeper/) },
    });
  });
});

describe('a catalogue the person did not add: nothing it names is read from this computer or the local network', () => {
  /** A catalogue file naming a category on `server` (127.0.0.1) and the icons given; it is read as a top document. */
  function catalogueFile(name: string, sub: string, icons: readonly string[]): string {
    const os = (icon: string, n: number) => ({
      name: `OS ${n}`,
      description: '',
      icon,
      url: 'https://example.com/x.img.xz',
      extract_size: 1,
      extract_sha256: 'a'.repeat(64),
      image_download_size: 1,
      release_date: '2026-11-01',
    });
    const file = join(dir, name);
    const items = [{ name: 'Lab', description: '', subitems_url: sub }, ...icons.map(os)];
    writeFileSync(file, JSON.stringify({ os_list: items }));
    return file;
  }

  it('a loopback sub-document and a private-range or link-local icon are refused, each with its reason; nothing is sent', async () => {
    const lab = await serve((_request, response) => void response.writeHead(200).end('{"os_list": []}'));
    try {
      const sub = `${lab.base}/lab.json`;
      const file = catalogueFile('public-only.json', sub, ['http://10.1.2.3/icon.png', 'http://169.254.169.254/x.png']);
      const document = await readCatalogueInChild({
        source: file,
        depth: 0,
        expand: true,
        savedDir: null,
        iconsDir: join(dir, 'icons-public-only'),
        localNetwork: false,
      });
      const why = 'a catalogue you did not add yourself may name only addresses on the internet.';
      expect(document.notes).toEqual([
        `"Lab" could not be read: Sluice does not read ${sub}: it is 127.0.0.1, this computer itself; ${why} To use one served on your network, add it in the settings (or name it with --repo).`,
        expect.stringMatching(
          new RegExp(
            `: icon not fetched: Sluice does not read http://10\\.1\\.2\\.3/icon\\.png: it is 10\\.1\\.2\\.3, a private address \\(a device on a local network\\); ${why.replace(/\./g, '\\.')}`,
          ),
        ),
        expect.stringMatching(/icon not fetched: .*: it is 169\.254\.169\.254, a link-local address/),
      ]);
      expect(lab.requests()).toBe(0);
    } finally {
      await lab.close();
    }
  });

  it('the same catalogue, added by the person (a lab mirror on 127.0.0.1), is read with its sub-document and icon', async () => {
    const png = tinyPng([1, 2, 3]);
    const lab = await serve((request, response) =>
      request.url === '/icon.png'
        ? void response.writeHead(200).end(png)
        : void response.writeHead(200).end('{"os_list": []}'),
    );
    try {
      const icons = join(dir, 'icons-added');
      const icon = `${lab.base}/icon.png`;
      const file = catalogueFile('added.json', `${lab.base}/lab.json`, [icon]);
      const document = await readCatalogueInChild({
        source: file,
        depth: 0,
        expand: true,
        savedDir: null,
        iconsDir: icons,
        localNetwork: true,
      });
      expect(document.notes).toEqual([]);
      expect(names(document.items)).toEqual([{ Lab: [] }, 'OS 0']);
      expect(readdirSync(icons)).toEqual([iconFileName(icon)]);
      expect(lab.requests()).toBe(2);
    } finally {
      await lab.close();
    }
  });
});
