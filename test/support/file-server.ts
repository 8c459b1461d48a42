import { readFileSync } from 'node:fs';
import { createServer, type RequestListener, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename } from 'node:path';

export interface FileServer {
  /** http://127.0.0.1:PORT */
  base: string;
  /** Requests answered so far. */
  requests(): number;
  close(): Promise<void>;
}

/** Serves what `handler` answers on 127.0.0.1; close() also cuts the connections still open (a stalled download's). */
export async function serve(handler: RequestListener): Promise<FileServer> {
  let requests = 0;
  const server = createServer((request, response) => {
    requests += 1;
    handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Serves `files` by their base names on 127.0.0.1, with their lengths; anything else is a 404.
 * With `ranges`, it answers range requests (bytes=A-B) as file servers and CDNs do.
 */
export function serveFiles(files: readonly string[], options: { ranges?: boolean } = {}): Promise<FileServer> {
  const bodies = new Map(files.map((file) => [`/${basename(file)}`, readFileSync(file)]));
  return serve((request, response) => {
    const body = bodies.get(request.url ?? '/');
    if (body === undefined) return response.writeHead(404, 'Not Found').end();
    const range = /^bytes=(\d+)-(\d+)$/.exec(request.headers.range ?? '');
    if (options.ranges === true && range !== null) {
      const start = Number(range[1]);
      const end = Math.min(Number(range[2]), body.length - 1);
      return response
        .writeHead(206, { 'Content-Range': `bytes ${start}-${end}/${body.length}`, 'Content-Length': end - start + 1 })
        .end(body.subarray(start, end + 1));
    }
    response.writeHead(200, { 'Content-Length': body.length, 'Content-Type': 'application/octet-stream' }).end(body);
  });
}

/**
 * Writes body[start, stop) to `response` at about `bytesPerSecond`, in 64 KiB pieces (a slow
 * network), then calls `finish`, also when the answer was cut off meanwhile.
 */
export function writePaced(
  response: ServerResponse,
  body: Buffer,
  start: number,
  stop: number,
  bytesPerSecond: number,
  finish: () => void,
): void {
  const piece = 64 * 1024;
  const next = (at: number): void => {
    if (at >= stop || response.destroyed) return void finish();
    const until = Math.min(stop, at + piece);
    response.write(body.subarray(at, until), () =>
      setTimeout(() => next(until), (1000 * (until - at)) / bytesPerSecond),
    );
  };
  next(start);
}

/** Serves `file` by its base name, with its length, at about `bytesPerSecond`: a slow download. */
export function servePaced(file: string, bytesPerSecond: number): Promise<FileServer> {
  const body = readFileSync(file);
  return serve((request, response) => {
    if (request.url !== `/${basename(file)}`) return void response.writeHead(404, 'Not Found').end();
    response.writeHead(200, { 'Content-Length': body.length, 'Content-Type': 'application/octet-stream' });
    writePaced(response, body, 0, body.length, bytesPerSecond, () => response.end());
  });
}
