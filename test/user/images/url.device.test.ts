import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Extent } from '../../../common/domain/extents.js';
import { MiB } from '../../../common/domain/units.js';
import { detectPartitionTable, PARTITION_TABLE_BYTES } from '../../../user/images/formats/partition-table.js';
import {
  assertTestTarget,
  collect,
  flashCli,
  resultsOf,
  spawnCli,
  waitForEvent,
  type CliRun,
} from '../../support/cli.js';
import { describeDevices } from '../../support/device-suite.js';
import { differencesOutside, imageFreeSpace } from '../../support/free-space.js';
import { createLoop, digestFile, readBytes, scratchDir, type LoopDevice } from '../../support/loop-device.js';
import { osImage, sh } from '../../support/os-image.js';

const IMAGE_SIZE = 16 * MiB;

describeDevices('sluice flash URL: streamed from a server, with its errors', () => {
  let dir: string;
  let image: Buffer;
  let files: Map<string, Buffer>;
  let server: Server;
  let base: string;
  let loop: LoopDevice;
  let free: Extent[];

  beforeAll(async () => {
    dir = scratchDir();
    osImage(dir, IMAGE_SIZE);
    free = await imageFreeSpace(join(dir, 'os.img'), dir);
    sh(dir, 'xz -T2 --block-size=2MiB -c os.img > os.img.xz && gzip -c os.img > os.img.gz');
    image = readFileSync(join(dir, 'os.img'));
    files = new Map(['os.img', 'os.img.xz', 'os.img.gz'].map((name) => [`/${name}`, readFileSync(join(dir, name))]));
    // The server the test controls: plain files, a redirect, HTTP errors, and a connection that
    // dies half-way through a body whose full length it announced.
    server = createServer((request, response) => {
      const url = request.url ?? '/';
      const body = files.get(url.replace(/^\/(cut|moved|ranged|stall)/, ''));
      if (url === '/missing.img.xz') return response.writeHead(404, 'Not Found').end();
      if (url === '/broken.img.xz') return response.writeHead(500, 'Internal Server Error').end();
      if (body === undefined) return response.writeHead(404).end();
      if (url.startsWith('/moved/')) return response.writeHead(302, { Location: url.replace('/moved', '') }).end();
      // Under /ranged/ the server answers range requests, as file servers and CDNs do.
      const range = /^bytes=(\d+)-(\d+)$/.exec(request.headers.range ?? '');
      if (url.startsWith('/ranged/') && range !== null) {
        const start = Number(range[1]);
        const end = Math.min(Number(range[2]), body.length - 1);
        return response
          .writeHead(206, {
            'Content-Range': `bytes ${start}-${end}/${body.length}`,
            'Content-Length': end - start + 1,
          })
          .end(body.subarray(start, end + 1));
      }
      response.writeHead(200, { 'Content-Length': body.length, 'Content-Type': 'application/octet-stream' });
      // Under /stall/ the server sends half the body, then nothing, with the connection left open.
      if (url.startsWith('/stall/')) return response.write(body.subarray(0, Math.floor(body.length / 2)));
      if (!url.startsWith('/cut/')) return response.end(body);
      // Enough for the probe's first bytes, then the connection drops mid-way.
      response.write(body.subarray(0, Math.floor(body.length / 2)), () =>
        setTimeout(() => response.socket?.destroy(), 50),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    loop = createLoop({ size: IMAGE_SIZE + 4 * MiB, dir });
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  function garbage(): void {
    sh(dir, `dd if=/dev/urandom of=${loop.backing} bs=1M count=${IMAGE_SIZE / MiB} conv=notrunc status=none`);
  }

  async function expectFailure(
    url: string,
    code: string,
    message: RegExp,
    flags: string[] = [],
    env: Record<string, string> = {},
  ): Promise<CliRun> {
    garbage();
    const run = await flashCli(url, [loop.path], ['--no-eject', ...flags], { env });
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.stdout).not.toMatch(/"status":"ok"/);
    const result = resultsOf(run).get(loop.path);
    if (result !== undefined) {
      expect(result).toMatchObject({ status: 'failed', code });
      expect(result.message).toMatch(message);
      expect(result.message).toMatch(/ The drive is incomplete; flash it again before use\.$/);
    } else {
      expect(run.stderr).toMatch(message);
    }
    expect(detectPartitionTable(readBytes(loop.backing, 0, PARTITION_TABLE_BYTES))).not.toBe('gpt');
    return run;
  }

  for (const name of ['os.img', 'os.img.xz', 'os.img.gz']) {
    it(`streams ${name} to the device, with progress, leaving out free space found on the way`, async () => {
      garbage();
      const run = await flashCli(`${base}/${name}`, [loop.path], ['--no-eject']);
      const result = resultsOf(run).get(loop.path);
      expect(result, run.stdout + run.stderr).toMatchObject({ status: 'ok', verified: true });
      expect(Number(result?.bytes) + Number(result?.skipped)).toBe(IMAGE_SIZE);
      expect(Number(result?.skipped)).toBeGreaterThan(IMAGE_SIZE / 4);
      // Writing, or named by what limits it (the download, its decoder) once that is measured.
      expect(
        run.events.some(
          (e) => e.type === 'progress' && ['writing', 'downloading', 'decompressing'].includes(String(e['phase'])),
        ),
      ).toBe(true);
      expect(differencesOutside(readBytes(loop.backing, 0, IMAGE_SIZE), image, free)).toEqual([]);
    });
  }

  it('follows a redirect and checks --sha256 over the downloaded bytes', async () => {
    const sha256 = createHash('sha256')
      .update(files.get('/os.img.xz') ?? Buffer.alloc(0))
      .digest('hex');
    garbage();
    const run = await flashCli(`${base}/moved/os.img.xz`, [loop.path], ['--no-eject', '--exact', '--sha256', sha256]);
    expect(resultsOf(run).get(loop.path), run.stdout + run.stderr).toMatchObject({ status: 'ok', bytes: IMAGE_SIZE });
    expect(run.events.find((e) => e.type === 'source')?.['checksum']).toMatchObject({ sha256, from: '--sha256' });
    expect(readBytes(loop.backing, 0, IMAGE_SIZE).equals(image)).toBe(true);
  });

  it('a download whose SHA-256 differs fails the flash', async () => {
    await expectFailure(
      `${base}/os.img.gz`,
      'source-checksum-mismatch',
      /SHA-256 is [0-9a-f]{64}, but --sha256 says f{64}/,
      ['--sha256', 'f'.repeat(64)],
    );
  });

  it('HTTP 404 is named, and nothing is written', async () => {
    await expectFailure(
      `${base}/missing.img.xz`,
      'source-read-error',
      /failed: the server answered 404 Not Found\. Check the address\./,
    );
  });

  it('HTTP 500 is named, and nothing is written', async () => {
    await expectFailure(
      `${base}/broken.img.xz`,
      'source-read-error',
      /failed: the server answered 500 Internal Server Error\. The server has a problem/,
    );
  });

  it('an .xz download is sized exactly from its index (range requests) when the server serves ranges: a card too small is refused before a byte is written', async () => {
    const info = async (url: string) => {
      const run = await collect(spawnCli(['info', '--json', url]));
      expect(run.code, run.stderr).toBe(0);
      return JSON.parse(run.stdout) as Record<string, unknown>;
    };
    expect(await info(`${base}/ranged/os.img.xz`)).toMatchObject({ format: 'xz', size: IMAGE_SIZE, sizeExact: true });
    // A server that ignores ranges: the size is known only once decoded, and the image is written all the same.
    expect(await info(`${base}/os.img.xz`)).toMatchObject({ format: 'xz', size: null, sizeExact: false });

    const small = createLoop({ size: IMAGE_SIZE - 4 * MiB, dir });
    const before = digestFile(small.backing);
    const refused = await flashCli(`${base}/ranged/os.img.xz`, [small.path], ['--no-eject']);
    expect(refused.code, refused.stderr).toBe(4);
    expect(resultsOf(refused).get(small.path)).toMatchObject({ status: 'failed', code: 'target-too-small' });
    expect(digestFile(small.backing)).toBe(before);

    garbage();
    const run = await flashCli(`${base}/ranged/os.img.xz`, [loop.path], ['--no-eject', '--exact']);
    expect(resultsOf(run).get(loop.path), run.stdout + run.stderr).toMatchObject({
      status: 'ok',
      verified: true,
      bytes: IMAGE_SIZE,
    });
    expect(readBytes(loop.backing, 0, IMAGE_SIZE).equals(image)).toBe(true);
  });

  for (const name of ['os.img', 'os.img.xz']) {
    it(`a connection that dies half-way through ${name}: the device is reported incomplete`, async () => {
      await expectFailure(
        `${base}/cut/${name}`,
        'source-truncated',
        /download of .* (broke off|stopped) after \d+ (bytes )?of \d+/,
      );
    });
  }

  for (const name of ['os.img', 'os.img.gz']) {
    it(`a server that stops sending half-way through ${name}: a clear failure once the stall timeout passes, not a wait forever`, async () => {
      const started = performance.now();
      // The stall timeout (30 s) shortened through the variable that exists for tests.
      await expectFailure(
        `${base}/stall/${name}`,
        'source-read-error',
        /download of .* stalled: the server stopped sending at byte \d+ of \d+, and sent nothing for 500 ms/,
        [],
        { SLUICE_STALL_TIMEOUT_MS: '500' },
      );
      expect(performance.now() - started).toBeLessThan(5000);
    });
  }

  it('Ctrl-C during the pause before a retry ends the flash at once, cancelled, with exit 130', async () => {
    garbage();
    assertTestTarget(loop.path);
    // A pause far longer than the test may wait: the cancel must not sit it out.
    const child = spawnCli(['flash', '--yes', '--json', '--no-eject', `${base}/cut/os.img.xz`, loop.path], {
      env: { SLUICE_RETRY_PAUSE_MS: '30000' },
    });
    const done = collect(child);
    await waitForEvent(
      child,
      (e) => e.type === 'notice' && /asking again for the rest in 30 s/.test(String(e['message'])),
    );
    const cancelledAt = performance.now();
    child.kill('SIGINT');
    const run = await done;
    const seconds = (performance.now() - cancelledAt) / 1000;
    expect(run.code, run.stdout + run.stderr).toBe(130);
    expect(seconds).toBeLessThan(3);
    expect(resultsOf(run).get(loop.path)).toMatchObject({ status: 'cancelled' });
    expect(run.stdout).not.toContain('"status":"ok"');
  });
});
