/**
 * A catalogue in Raspberry Pi Imager's os_list v4 schema, written for the tests from the public
 * format, served with its icons and images from 127.0.0.1: two boards, an entry inline, a category
 * whose entries are in another document (subitems_url) that holds yet another (nested twice), one
 * malformed entry, and three small OS images as .img.xz. The server answers range requests as file
 * servers do (`bytes=A-B` and `bytes=A-`, If-Range with an ETag), counts requests by path, and can
 * cut one download short part-way, as a dropped connection would.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { deflateSync, crc32 } from 'node:zlib';
import { MiB } from '../../common/domain/units.js';
import { serve, serveFiles, writePaced, type FileServer } from './file-server.js';
import { LAYOUT_IMAGE_SIZE, layoutImage, osImage, sh } from './os-image.js';

export const IMAGE_SIZE = 16 * MiB;

export interface TestImage {
  /** The raw image and its .img.xz, in the test's directory. */
  raw: string;
  xz: string;
  /** Where the server serves the .img.xz. */
  path: string;
  extractSha256: string;
  downloadSha256: string;
  downloadSize: number;
}

export interface CatalogueServer extends FileServer {
  /** The top document's address. */
  top: string;
  images: Record<'lite' | 'desktop' | 'rescue', TestImage>;
  /** Requests answered for `path`. */
  requestsFor(path: string): number;
  /** The Range headers of the requests for `path`, in order. */
  rangesFor(path: string): string[];
  /**
   * The next `times` whole-body answers for `path` send `fraction` of it, then drop the
   * connection; `after` whole-body answers before them are sent whole.
   */
  cutNext(path: string, fraction: number, times?: number, after?: number): void;
  /** Every answer for `path`, whole or a range, stops at `fraction` of the file and drops the connection, until mend(). */
  breakAll(path: string, fraction: number): void;
  mend(path: string): void;
  /** Answers for `path` are sent at `bytesPerSecond` (a slow network), or at full speed again with null. */
  pace(path: string, bytesPerSecond: number | null): void;
  /** Replaces what `path` serves (a document, or an image with other bytes). */
  put(path: string, body: Buffer): void;
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A PNG of one pixel: enough for an <img> to show and for a type check to recognise. */
export function tinyPng(rgb: [number, number, number]): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), 8 + data.length);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(1, 0);
  header.writeUInt32BE(1, 4);
  header.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from('89504e470d0a1a0a', 'hex'),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.from([0, ...rgb]))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function makeImage(dir: string, name: string): TestImage {
  const raw = osImage(dir, IMAGE_SIZE, `${name}.img`);
  sh(dir, `xz -T2 -1 --block-size=2MiB -c ${name}.img > ${name}.img.xz`);
  const xz = join(dir, `${name}.img.xz`);
  const compressed = readFileSync(xz);
  return {
    raw,
    xz,
    path: `/images/${name}.img.xz`,
    extractSha256: sha256(readFileSync(raw)),
    downloadSha256: sha256(compressed),
    downloadSize: compressed.length,
  };
}

function entry(
  name: string,
  image: TestImage,
  devices: string[] | undefined,
  icon: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    name,
    description: `${name}: a small OS image for the tests`,
    icon,
    url: image.path,
    extract_size: IMAGE_SIZE,
    extract_sha256: image.extractSha256,
    image_download_size: image.downloadSize,
    image_download_sha256: image.downloadSha256,
    release_date: '2026-11-19',
    ...(devices === undefined ? {} : { devices }),
    init_format: 'systemd',
    architecture: 'armv8',
    ...extra,
  };
}

/** The documents, keyed by the path they are served at. */
export function catalogueDocuments(images: CatalogueServer['images']): Record<string, unknown> {
  return {
    '/os_list_v4.json': {
      imager: {
        latest_version: '2.0.3',
        devices: [
          {
            name: 'Board A',
            description: 'The first board',
            icon: '/icons/board-a.png',
            tags: ['board-a', 'board-a-64'],
            matching_type: 'exclusive',
          },
          { name: 'Board B', description: 'The second board', tags: ['board-b'], matching_type: 'inclusive' },
          { name: 'Board without tags', description: 'malformed: no tags' },
        ],
      },
      os_list: [
        entry('Test OS Lite', images.lite, ['board-a'], '/icons/lite.png'),
        {
          name: 'Other systems',
          description: 'Systems in another document',
          icon: '/icons/folder.png',
          subitems_url: '/lists/other.json',
        },
        { ...entry('Broken entry', images.lite, ['board-a'], '/icons/lite.png'), extract_sha256: 'not a checksum' },
        {
          name: 'Generic',
          description: 'For every board',
          icon: '/icons/folder.png',
          subitems: [entry('Test OS Generic', images.rescue, undefined, '/icons/rescue.png')],
        },
      ],
    },
    '/lists/other.json': {
      os_list: [
        entry('Test OS Desktop', images.desktop, ['board-a-64', 'board-b'], '../icons/desktop.png'),
        { name: 'Rescue', description: 'Yet another document', subitems_url: 'rescue.json' },
      ],
    },
    '/lists/rescue.json': {
      os_list: [entry('Test OS Rescue', images.rescue, ['board-b'], '/icons/rescue.png')],
    },
  };
}

/** Makes the images in `dir` and serves the catalogue from 127.0.0.1. */
export async function serveCatalogue(dir: string): Promise<CatalogueServer> {
  const images = { lite: makeImage(dir, 'lite'), desktop: makeImage(dir, 'desktop'), rescue: makeImage(dir, 'rescue') };
  const bodies = new Map<string, Buffer>();
  for (const [path, document] of Object.entries(catalogueDocuments(images)))
    bodies.set(path, Buffer.from(JSON.stringify(document, null, 2)));
  for (const image of Object.values(images)) bodies.set(image.path, readFileSync(image.xz));
  const colours: Record<string, [number, number, number]> = {
    'board-a': [200, 30, 60],
    lite: [30, 160, 60],
    folder: [220, 180, 40],
    desktop: [40, 90, 200],
    rescue: [120, 40, 160],
  };
  for (const [name, rgb] of Object.entries(colours)) bodies.set(`/icons/${name}.png`, tinyPng(rgb));
  writeFileSync(join(dir, 'os_list_v4.json'), bodies.get('/os_list_v4.json') ?? '');
  const counts = new Map<string, number>();
  const ranges = new Map<string, string[]>();
  const cuts = new Map<string, { fraction: number; times: number; after: number }>();
  const broken = new Map<string, number>();
  /** Sends the answer's bytes up to file offset `at` (the answer starts at `start`), then drops the connection. */
  const paced = new Map<string, number>();
  /**
   * Sends body[start, end) (at `bytesPerSecond` when paced, in 64 KiB pieces), then ends the
   * answer, or drops the connection when `cutAt` (a file offset) comes first.
   */
  const send = (
    response: ServerResponse,
    body: Buffer,
    start: number,
    end: number,
    cutAt: number | undefined,
    bytesPerSecond: number | undefined,
  ) => {
    const stop = cutAt === undefined ? end : Math.max(start, Math.min(end, cutAt));
    const finish = () => (stop < end ? setTimeout(() => response.socket?.destroy(), 20) : response.end());
    if (bytesPerSecond === undefined) return void response.write(body.subarray(start, stop), finish);
    writePaced(response, body, start, stop, bytesPerSecond, finish);
  };
  const server = await serve((request, response) => {
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    counts.set(path, (counts.get(path) ?? 0) + 1);
    if (request.headers.range !== undefined) ranges.set(path, [...(ranges.get(path) ?? []), request.headers.range]);
    const body = bodies.get(path);
    if (body === undefined) return void response.writeHead(404, 'Not Found').end();
    const etag = `"${sha256(body).slice(0, 16)}"`;
    const range = /^bytes=(\d+)-(\d*)$/.exec(request.headers.range ?? '');
    const ifRange = request.headers['if-range'];
    if (range !== null && (ifRange === undefined || ifRange === etag)) {
      const start = Number(range[1]);
      const end = Math.min(range[2] === '' ? body.length - 1 : Number(range[2]), body.length - 1);
      if (start >= body.length)
        return void response.writeHead(416, { 'Content-Range': `bytes */${body.length}` }).end();
      response.writeHead(206, {
        'Content-Range': `bytes ${start}-${end}/${body.length}`,
        'Content-Length': end - start + 1,
        ETag: etag,
      });
      const at = broken.get(path);
      return void send(
        response,
        body,
        start,
        end + 1,
        at === undefined ? undefined : Math.floor(body.length * at),
        paced.get(path),
      );
    }
    response.writeHead(200, {
      'Content-Length': body.length,
      'Content-Type': path.endsWith('.json') ? 'application/json' : 'application/octet-stream',
      ETag: etag,
    });
    const next = cuts.get(path);
    const cut = next !== undefined && next.after > 0 ? undefined : next;
    if (next !== undefined && next.after > 0) next.after -= 1;
    else if (next !== undefined) {
      if (next.times <= 1) cuts.delete(path);
      else next.times -= 1;
    }
    const at = cut?.fraction ?? broken.get(path);
    send(response, body, 0, body.length, at === undefined ? undefined : Math.floor(body.length * at), paced.get(path));
  });
  return {
    ...server,
    top: `${server.base}/os_list_v4.json`,
    images,
    requestsFor: (path) => counts.get(path) ?? 0,
    rangesFor: (path) => ranges.get(path) ?? [],
    cutNext: (path, fraction, times = 1, after = 0) => cuts.set(path, { fraction, times, after }),
    breakAll: (path, fraction) => broken.set(path, fraction),
    mend: (path) => broken.delete(path),
    put: (path, body) => bodies.set(path, body),
    pace: (path, bytesPerSecond) =>
      void (bytesPerSecond === null ? paced.delete(path) : paced.set(path, bytesPerSecond)),
  };
}

/** An entry of a catalogue of the customisation layouts (serveLayoutCatalogue). */
export interface LayoutEntry {
  name: string;
  layout: 'pi-os' | 'ubuntu';
  /** The entry's init_format, as Raspberry Pi Imager's catalogue writes it. */
  initFormat: string;
}

/**
 * A catalogue of issue 13's layout images (os-image.ts layoutImage) as .img.xz, one document on
 * 127.0.0.1 whose entries name the images with the init_format each is given; range requests are
 * answered. `raw` holds each layout's raw image, to compare a card with.
 */
export async function serveLayoutCatalogue(
  dir: string,
  entries: readonly LayoutEntry[],
): Promise<FileServer & { top: string; raw: Record<LayoutEntry['layout'], string> }> {
  const raw = { 'pi-os': layoutImage(dir, 'pi-os'), ubuntu: layoutImage(dir, 'ubuntu') };
  sh(dir, 'xz -T2 -k -1 pi-os.img && xz -T2 -k -1 ubuntu.img');
  const os_list = entries.map(({ name, layout, initFormat }) => {
    const compressed = readFileSync(`${raw[layout]}.xz`);
    return {
      name,
      description: `${name}: a ${layout} layout image for the tests`,
      url: `/${layout}.img.xz`,
      extract_size: LAYOUT_IMAGE_SIZE,
      extract_sha256: sha256(readFileSync(raw[layout])),
      image_download_size: compressed.length,
      image_download_sha256: sha256(compressed),
      release_date: '2026-11-24',
      init_format: initFormat,
    };
  });
  const document = join(dir, 'layouts_v4.json');
  writeFileSync(document, JSON.stringify({ os_list }));
  const server = await serveFiles([document, `${raw['pi-os']}.xz`, `${raw.ubuntu}.xz`], { ranges: true });
  return { ...server, top: `${server.base}/layouts_v4.json`, raw };
}
