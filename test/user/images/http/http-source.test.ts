import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHttp } from '../../../../user/images/http/http-source.js';
import { addressScope, redirectRefusal } from '../../../../user/images/http/redirect-policy.js';
import { collect, spawnCli, type CliRun } from '../../../support/cli.js';
import { scratchDir, writeRandomFile } from '../../../support/loop-device.js';

describe('addressScope: which addresses are not on the public internet', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.8.9.10', 'loopback'],
    ['0.0.0.0', 'loopback'],
    ['::1', 'loopback'],
    ['::', 'loopback'],
    // IPv4-mapped, as a dual-stack socket or a resolver may give them.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['::ffff:169.254.1.1', 'link-local'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['fd12:3456::1', 'private'],
    ['::ffff:192.168.0.10', 'private'],
    ['93.184.216.34', null],
    ['172.32.0.1', null],
    ['8.8.8.8', null],
    ['2606:4700::1111', null],
    ['::ffff:8.8.8.8', null],
  ] as const)('%s: %s', (address, scope) => {
    expect(addressScope(address)).toBe(scope);
  });
});

describe('redirectRefusal: which redirects a download follows', () => {
  const PUBLIC = '93.184.216.34';
  const step = (from: string, fromAddress: string | null, to: string, toAddresses: string[]) =>
    redirectRefusal({ from: new URL(from), fromAddress, to: new URL(to), toAddresses });

  it('from a public host to loopback, link-local or private addresses: refused, naming the address', () => {
    for (const address of [
      '127.0.0.1',
      '::1',
      '::ffff:127.0.0.1',
      '169.254.169.254',
      'fe80::1',
      '10.0.0.5',
      '192.168.1.1',
      'fd00::5',
    ]) {
      expect(step('https://images.example/os.img.xz', PUBLIC, 'https://router.example/admin', [address])).toMatch(
        new RegExp(
          `redirects to https://router.example/admin, which is ${address.replace(/\./g, '\\.')}: .*Sluice does not follow a redirect from the internet into the local network`,
        ),
      );
    }
    // One private address among public ones is enough: the connection may use any of them.
    expect(step('https://a.example/x', PUBLIC, 'https://b.example/y', ['8.8.8.8', '127.0.0.1'])).toMatch(
      /which is 127\.0\.0\.1: this computer itself/,
    );
    // A server whose address the socket did not give is taken as public.
    expect(step('https://a.example/x', null, 'https://b.example/y', ['192.168.0.1'])).toMatch(/a private address/);
  });

  it('public to public, and local to local (images served on the LAN): followed', () => {
    expect(step('https://a.example/x', PUBLIC, 'https://cdn.example/y', ['8.8.8.8', '2606:4700::1111'])).toBeNull();
    expect(step('http://192.168.1.2/x', '192.168.1.2', 'http://127.0.0.1/y', ['127.0.0.1'])).toBeNull();
    expect(step('http://nas.local/x', 'fe80::2', 'http://10.0.0.1/y', ['10.0.0.1'])).toBeNull();
  });

  it('https to http: refused, wherever it goes', () => {
    for (const from of [PUBLIC, '127.0.0.1']) {
      expect(step('https://a.example/os.img', from, 'http://a.example/os.img', [from])).toMatch(
        /from a secure \(https\) address to an insecure \(http\) one/,
      );
    }
    expect(step('http://a.example/os.img', PUBLIC, 'https://a.example/os.img', [PUBLIC])).toBeNull();
  });

  it('to anything but http(s): refused', () => {
    expect(step('http://127.0.0.1/x', '127.0.0.1', 'file:///etc/shadow', [])).toMatch(/not an http\(s\) address/);
  });
});

/** Starts `server` on 127.0.0.1; its port. */
async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return String((server.address() as AddressInfo).port);
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

describe('downloads from servers the test controls (127.0.0.1)', () => {
  let dir: string;
  let image: Buffer;
  let http: Server;
  let https: Server;
  let httpPort: string;
  let httpsPort: string;
  /** Paths the plain http server was asked for. */
  const asked: string[] = [];

  const routes: Record<string, (response: ServerResponse, request: IncomingMessage) => void> = {
    '/os.img.gz': (response) => response.writeHead(200, { 'Content-Length': image.length }).end(image),
    '/hop': (response) => response.writeHead(302, { Location: `http://localhost:${httpPort}/os.img.gz` }).end(),
    '/to-file': (response) => response.writeHead(302, { Location: 'file:///etc/passwd' }).end(),
    // Headers and the first 100 bytes, then silence with the connection open.
    '/stall.img.gz': (response) =>
      response.writeHead(200, { 'Content-Length': image.length }).write(image.subarray(0, 100)),
    // A connection that is accepted and never answered.
    '/mute.img.gz': () => undefined,
    '/sums/os.img.gz': (response) => response.writeHead(200, { 'Content-Length': image.length }).end(image),
    '/sums/os.img.gz.sha256': (response) =>
      response.end(`${createHash('sha256').update(image).digest('hex')}  os.img.gz\n`),
    '/list/os.img.gz': (response) => response.writeHead(200, { 'Content-Length': image.length }).end(image),
    '/list/SHA256SUMS': (response) => response.end(`${'c'.repeat(64)}  other.img\n${'d'.repeat(64)}  os.img.gz\n`),
    '/huge/os.img.gz': (response) => response.writeHead(200, { 'Content-Length': image.length }).end(image),
    // A "checksum list" of 2 MiB, sent without a length, that names the image at its start: not a checksum list.
    '/huge/SHA256SUMS': (response) => {
      response.write(`${'e'.repeat(64)}  os.img.gz\n`);
      response.end(`${'#'.repeat(2 * 1024 * 1024)}\n`);
    },
  };

  beforeAll(async () => {
    dir = scratchDir();
    writeRandomFile(join(dir, 'os.img'), 256 * 1024);
    image = gzipSync(readFileSync(join(dir, 'os.img')));
    http = createServer((request, response) => {
      asked.push(request.url ?? '');
      const route = routes[request.url ?? ''];
      if (route === undefined) return response.writeHead(404).end();
      route(response, request);
    });
    httpPort = await listen(http);
    // A certificate for 127.0.0.1 that the CLI trusts through NODE_EXTRA_CA_CERTS.
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    https = createTlsServer(
      { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
      (request, response) => {
        if (request.url === '/os.img.gz') return response.writeHead(200, { 'Content-Length': image.length }).end(image);
        if (request.url === '/down')
          return response.writeHead(301, { Location: `http://127.0.0.1:${httpPort}/os.img.gz` }).end();
        response.writeHead(404).end();
      },
    );
    httpsPort = await listen(https);
  });

  afterAll(async () => {
    await close(http);
    await close(https);
  });

  async function info(url: string, env: Record<string, string> = {}): Promise<CliRun & { ms: number }> {
    const started = performance.now();
    const run = await collect(
      spawnCli(['info', '--json', url], { env: { NODE_EXTRA_CA_CERTS: join(dir, 'cert.pem'), ...env } }),
    );
    return { ...run, ms: performance.now() - started };
  }

  it('a redirect from one local host to another is followed (127.0.0.1 to localhost)', async () => {
    const body = await openHttp(`http://127.0.0.1:${httpPort}/hop`);
    const chunks: Buffer[] = [];
    for await (const chunk of body.stream) chunks.push(chunk as Buffer);
    expect(body.finalUrl).toBe(`http://localhost:${httpPort}/os.img.gz`);
    expect(Buffer.concat(chunks).equals(image)).toBe(true);
  });

  it('an https download redirected to http is refused before anything is asked of the http server', async () => {
    // The same server, without the redirect, works: the refusal is not a certificate problem.
    const direct = await info(`https://127.0.0.1:${httpsPort}/os.img.gz`);
    expect(direct.code, direct.stderr).toBe(0);
    asked.length = 0;
    const run = await info(`https://127.0.0.1:${httpsPort}/down`);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /redirects to http:\/\/127\.0\.0\.1:\d+\/os\.img\.gz: from a secure \(https\) address to an insecure \(http\) one/,
    );
    expect(asked).toEqual([]);
    expect(run.ms).toBeLessThan(5000);
  });

  it('a redirect to a file: address is refused', async () => {
    await expect(openHttp(`http://127.0.0.1:${httpPort}/to-file`)).rejects.toMatchObject({
      failure: {
        code: 'source-read-error',
        message: expect.stringMatching(
          /redirects to file:\/\/\/etc\/passwd, which is not an http\(s\) address/,
        ) as unknown,
      },
    });
  });

  it('a download that stops sending fails with the byte it stopped at (stall timeout shortened for the test)', async () => {
    const run = await info(`http://127.0.0.1:${httpPort}/stall.img.gz`, { SLUICE_STALL_TIMEOUT_MS: '300' });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      new RegExp(`stalled: the server stopped sending at byte 100 of ${image.length}, and sent nothing for 300 ms`),
    );
    expect(run.ms).toBeLessThan(5000);
  });

  it('a server that never answers fails once the stall timeout has passed', async () => {
    const run = await info(`http://127.0.0.1:${httpPort}/mute.img.gz`, { SLUICE_STALL_TIMEOUT_MS: '300' });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/the server did not answer within 300 ms/);
    expect(run.ms).toBeLessThan(5000);
  });

  it('finds URL.sha256 beside a download, and SHA256SUMS in its folder; a 404 is simply none', async () => {
    const sha256 = createHash('sha256').update(image).digest('hex');
    const own = await info(`http://127.0.0.1:${httpPort}/sums/os.img.gz`);
    expect(JSON.parse(own.stdout)).toMatchObject({
      checksum: { sha256, from: `http://127.0.0.1:${httpPort}/sums/os.img.gz.sha256` },
    });
    const listed = await info(`http://127.0.0.1:${httpPort}/list/os.img.gz`);
    expect(JSON.parse(listed.stdout)).toMatchObject({
      checksum: { sha256: 'd'.repeat(64), from: `http://127.0.0.1:${httpPort}/list/SHA256SUMS` },
    });
    const none = await info(`http://127.0.0.1:${httpPort}/os.img.gz`);
    expect(JSON.parse(none.stdout)).toMatchObject({ checksum: null });
  });

  it('a "checksum list" larger than a checksum list can be is not read through, and counts as none', async () => {
    const run = await info(`http://127.0.0.1:${httpPort}/huge/os.img.gz`);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ checksum: null });
  });
});
