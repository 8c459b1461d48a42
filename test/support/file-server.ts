import { readFileSync } from 'node:fs';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename } from 'node:path';

export interface FileServer {
  /** http://127.0.0.1:PORT */
  base: string;
  close(): Promise<void>;
}

/** Serves what `handler` answers on 127.0.0.1; close() also cuts the connections still open (a stalled download's). */
export async function serve(handler: RequestListener): Promise<FileServer> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Serves `files` by their base names on 127.0.0.1, with their lengths; anything else is a 404. */
export function serveFiles(files: readonly string[]): Promise<FileServer> {
  const bodies = new Map(files.map((file) => [`/${basename(file)}`, readFileSync(file)]));
  return serve((request, response) => {
    const body = bodies.get(request.url ?? '/');
    if (body === undefined) return response.writeHead(404, 'Not Found').end();
    response.writeHead(200, { 'Content-Length': body.length, 'Content-Type': 'application/octet-stream' }).end(body);
  });
}
