/**
 * openDownload (user/images/http/download.ts): a download that a dropped connection does not end, and
 * that fills the image cache's partial file as it goes. The server is the test's own on 127.0.0.1;
 * it drops connections where the test says.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MiB } from '../../../../common/domain/units.js';
import { serve, type FileServer } from '../../../support/file-server.js';

// Retries without the pauses a real network gets (1, 2, 4, 8, 16 s): read when the module loads.
process.env['SLUICE_RETRY_PAUSE_MS'] = '10';
const { MAX_RETRIES, openDownload } = await import('../../../../user/images/http/download.js');

const FILE = randomBytes(8 * MiB);
const ETAG = '"v1"';

let dir: string;
let server: FileServer;
/** How each request was answered: its Range header and what it got. */
let log: { range: string | null; ifRange: string | null; status: number }[] = [];
/** The next answers: cut after this many bytes (whole or part), or answer with a status, or ignore ranges. */
let plan: (
  { cutAfter: number } | { status: number } | { ignoreRange: true } | { changed: true } | { dropBeforeHeaders: true }
)[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-download-'));
  server = await serve((request, response) => {
    const step = plan.shift();
    const range = /^bytes=(\d+)-$/.exec(request.headers.range ?? '');
    const ifRange = (request.headers['if-range'] as string | undefined) ?? null;
    const record = (status: number) => log.push({ range: request.headers.range ?? null, ifRange, status });
    if (step !== undefined && 'dropBeforeHeaders' in step) {
      record(0);
      return void request.socket.destroy();
    }
    if (step !== undefined && 'status' in step) {
      record(step.status);
      return void response.writeHead(step.status).end();
    }
    const etag = step !== undefined && 'changed' in step ? '"v2"' : ETAG;
    const honoured =
      range !== null && !(step !== undefined && 'ignoreRange' in step) && (ifRange === null || ifRange === etag);
    const start = honoured ? Number(range[1]) : 0;
    const body = FILE.subarray(start);
    record(honoured ? 206 : 200);
    response.writeHead(honoured ? 206 : 200, {
      'Content-Length': body.length,
      ETag: etag,
      ...(honoured ? { 'Content-Range': `bytes ${start}-${FILE.length - 1}/${FILE.length}` } : {}),
    });
    if (step === undefined || !('cutAfter' in step)) return void response.end(body);
    // The headers go out even when no byte of the body does.
    response.flushHeaders();
    response.write(body.subarray(0, step.cutAfter), () => setTimeout(() => response.socket?.destroy(), 10));
  });
});

afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

afterEach(() => {
  log = [];
  plan = [];
});

const url = () => `${server.base}/image.img.xz`;
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

function tee(name: string) {
  return { partial: join(dir, `${name}.part`), complete: join(dir, name) };
}

describe('openDownload: resumed after a dropped connection', () => {
  it('a connection cut at 40% is asked again from the byte it reached, with If-Range, and the reader sees the whole file once', async () => {
    const at = Math.floor(FILE.length * 0.4);
    plan = [{ cutAfter: at }];
    const notices: string[] = [];
    const download = await openDownload(url(), null, {
      retrying: (offset, attempt) => notices.push(`${offset}:${attempt}`),
    });
    expect(download.size).toBe(FILE.length);
    const got = await buffer(download.stream);
    expect(sha(got)).toBe(sha(FILE));
    expect(log.map((l) => [l.range, l.ifRange, l.status])).toEqual([
      [null, null, 200],
      [`bytes=${at}-`, ETAG, 206],
    ]);
    expect(notices).toEqual([`${at}:1`]);
  });

  it(`keeps going through ${MAX_RETRIES} failures in a row (cuts, refused and failing answers), and gives up after that`, async () => {
    plan = [
      { cutAfter: 1 * MiB },
      { status: 503 },
      { cutAfter: 0 },
      { status: 502 },
      { cutAfter: 2 * MiB },
      { status: 503 },
      { status: 503 },
      { status: 503 },
      { status: 503 },
    ];
    const download = await openDownload(url(), null, { retrying: () => undefined });
    expect(sha(await buffer(download.stream))).toBe(sha(FILE));
    // A try that got further starts the count again: five failures in a row at most, then a sixth would end it.
    plan = [{ cutAfter: 1 * MiB }, { status: 503 }, { status: 503 }, { status: 503 }, { status: 503 }, { status: 503 }];
    const failing = await openDownload(url(), null, { retrying: () => undefined });
    await expect(buffer(failing.stream)).rejects.toThrow(
      new RegExp(
        `stopped at byte ${1 * MiB}, and ${MAX_RETRIES} more tries got no further, so Sluice gave up\\. The last: .*503`,
      ),
    );
  });

  it('fails, saying why, when the server does not send parts of files or the file changed on it', async () => {
    plan = [{ cutAfter: 1 * MiB }, { ignoreRange: true }];
    const ignoring = await openDownload(url(), null, { retrying: () => undefined });
    await expect(buffer(ignoring.stream)).rejects.toThrow(
      new RegExp(
        `broke off after ${1 * MiB} bytes of ${FILE.length}: .*; it cannot go on from there: the server sent the whole file again`,
      ),
    );
    plan = [{ cutAfter: 1 * MiB }, { changed: true }];
    const changed = await openDownload(url(), null, { retrying: () => undefined });
    await expect(buffer(changed.stream)).rejects.toThrow(
      /cannot go on from there: the server sent the whole file again \(it does not send parts of files, or the file changed on it\)\.$/,
    );
    expect(log.at(-1)).toMatchObject({ range: `bytes=${1 * MiB}-`, ifRange: ETAG, status: 200 });
  });

  it('does not ask again after a refusal such as 404', async () => {
    plan = [{ cutAfter: 1 * MiB }, { status: 404 }];
    const download = await openDownload(url(), null, { retrying: () => undefined });
    await expect(buffer(download.stream)).rejects.toThrow(/the server answered 404/);
    expect(log).toHaveLength(2);
  });
});

describe('openDownload with the cache: the partial file is filled as it goes and resumed by the next try', () => {
  it('saves every byte it passes on, resumes a dropped connection into the same file, and commits it', async () => {
    const files = tee('a');
    plan = [{ cutAfter: 3 * MiB }];
    const download = await openDownload(url(), files, { retrying: () => undefined });
    expect(sha(await buffer(download.stream))).toBe(sha(FILE));
    expect(sha(readFileSync(files.partial))).toBe(sha(FILE));
    await download.commit();
    expect(existsSync(files.partial)).toBe(false);
    expect(sha(readFileSync(files.complete))).toBe(sha(FILE));
  });

  it('a later try reads the partial file back and asks the server only for the rest', async () => {
    const files = tee('b');
    writeFileSync(files.partial, FILE.subarray(0, 5 * MiB));
    const download = await openDownload(url(), files, { retrying: () => undefined });
    expect(download.resumedFrom).toBe(5 * MiB);
    expect(sha(await buffer(download.stream))).toBe(sha(FILE));
    expect(log.map((l) => [l.range, l.status])).toEqual([[`bytes=${5 * MiB}-`, 206]]);
    expect(sha(readFileSync(files.partial))).toBe(sha(FILE));
  });

  it('starts again from nothing when the server sends the whole file instead of the rest', async () => {
    const files = tee('c');
    writeFileSync(files.partial, Buffer.alloc(2 * MiB, 7));
    plan = [{ ignoreRange: true }];
    const download = await openDownload(url(), files, { retrying: () => undefined });
    expect(download.resumedFrom).toBe(0);
    expect(sha(await buffer(download.stream))).toBe(sha(FILE));
    expect(sha(readFileSync(files.partial))).toBe(sha(FILE));
    await download.discard();
    expect(existsSync(files.partial)).toBe(false);
  });
});

describe('openDownload: a connection that drops before the body starts', () => {
  it('is asked again, with the cache as without it, from nothing or from a partial file that is read back first', async () => {
    const runs = [
      { files: null, have: 0 },
      { files: tee('fresh'), have: 0 },
      { files: tee('partial'), have: 3 * MiB },
    ];
    for (const { files, have } of runs) {
      if (files !== null && have > 0) writeFileSync(files.partial, FILE.subarray(0, have));
      log = [];
      // The headers, then the connection closes: no byte of the body comes.
      plan = [{ cutAfter: 0 }];
      const notices: number[] = [];
      const download = await openDownload(url(), files, { retrying: (offset) => notices.push(offset) });
      // The reader starts after the connection has closed, as a decoder still setting up would.
      await sleep(100);
      expect(sha(await buffer(download.stream))).toBe(sha(FILE));
      expect(notices).toEqual([have]);
      expect(log.map((l) => l.status)).toEqual(have > 0 ? [206, 206] : [200, 206]);
      if (files !== null) expect(sha(readFileSync(files.partial))).toBe(sha(FILE));
    }
  });

  it('before any answer at all, on the first request: asked again, with the cache as without it, and with a partial file from where it ends', async () => {
    const runs = [
      { files: null, have: 0 },
      { files: tee('dropped-fresh'), have: 0 },
      { files: tee('dropped-partial'), have: 5 * MiB },
    ];
    for (const { files, have } of runs) {
      if (files !== null && have > 0) writeFileSync(files.partial, FILE.subarray(0, have));
      log = [];
      // The connection is taken and closed, twice in a row, before a byte of the answer's headers.
      plan = [{ dropBeforeHeaders: true }, { dropBeforeHeaders: true }];
      const notices: string[] = [];
      const download = await openDownload(url(), files, {
        retrying: (offset, attempt, _pause, why) => notices.push(`${offset}:${attempt}:${why}`),
      });
      expect(sha(await buffer(download.stream))).toBe(sha(FILE));
      expect(notices).toEqual(
        [1, 2].map(
          (attempt) => `${have}:${attempt}:Downloading ${url()} failed: the connection was closed by the server.`,
        ),
      );
      expect(log.map((l) => l.status)).toEqual([0, 0, have > 0 ? 206 : 200]);
      if (files !== null) expect(sha(readFileSync(files.partial))).toBe(sha(FILE));
    }
  });

  it('a server that keeps dropping before its first answer is given up on after the retries, saying so', async () => {
    plan = Array.from({ length: MAX_RETRIES + 1 }, () => ({ dropBeforeHeaders: true as const }));
    await expect(openDownload(url(), null, { retrying: () => undefined })).rejects.toThrow(
      new RegExp(
        `stopped at byte 0, and ${MAX_RETRIES} more tries got no further, so Sluice gave up\\. The last: .*closed by the server`,
      ),
    );
    expect(log).toHaveLength(MAX_RETRIES + 1);
  });
});
