import { Readable } from 'node:stream';
import { jobError } from '../../common/domain/failure.js';
import { errorCode, errorText } from '../../common/domain/error-details.js';

/** An HTTP(S) response body being streamed. */
export interface HttpBody {
  stream: Readable;
  /** Content-Length of the body, when the server sent one. */
  size: number | null;
  /** The address the body came from, after redirects. */
  finalUrl: string;
  /** The server sent only the range asked for (206), not the whole file. */
  partial: boolean;
}

/** fetch() follows this many redirects before it gives up, as browsers do. */
const MAX_REDIRECTS = 20;

/** Why a connection failed, in words: fetch() hides the socket's error code in `cause`. */
function networkReason(error: unknown): string {
  const cause = typeof error === 'object' && error !== null && 'cause' in error ? error.cause : null;
  const code = errorCode(cause);
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the server name could not be resolved (no network, or a typo in the address?)';
    case 'ECONNREFUSED':
      return 'the server refused the connection';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'the connection was closed by the server';
    case 'ETIMEDOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return 'the connection timed out';
    default:
      return cause !== null ? errorText(cause) : errorText(error);
  }
}

export function isUrl(text: string): boolean {
  return /^https?:\/\//i.test(text);
}

/**
 * Starts downloading `url` (redirects followed) and returns its body as a stream. An HTTP error
 * status is an error here, with the status in the message; so is a body that ends before its
 * Content-Length or breaks off mid-way, since a short image must never look like a whole one.
 * `range` asks for the first bytes only (probing).
 */
export async function openHttp(url: string, options: { range?: [number, number] | undefined; signal?: AbortSignal | undefined } = {}): Promise<HttpBody> {
  let response: Response;
  try {
    response = await fetch(url, {
      redirect: 'follow',
      signal: options.signal ?? null,
      headers: options.range === undefined ? {} : { Range: `bytes=${options.range[0]}-${options.range[1]}` },
    });
  } catch (error) {
    if (/redirect/i.test(networkReason(error))) throw jobError('source-read-error', `Downloading ${url} failed: more than ${MAX_REDIRECTS} redirects.`);
    throw jobError('source-read-error', `Downloading ${url} failed: ${networkReason(error)}.`);
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    const status = `${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
    const hint = response.status === 404 ? ' Check the address.' : response.status >= 500 ? ' The server has a problem; try again later.' : '';
    throw jobError('source-read-error', `Downloading ${url} failed: the server answered ${status}.${hint}`);
  }
  if (response.body === null) throw jobError('source-read-error', `Downloading ${url} failed: the server sent no data.`);
  const length = response.headers.get('content-length');
  const size = length !== null && /^\d+$/.test(length) && response.status === 200 ? Number(length) : null;
  return { stream: checkedBody(Readable.fromWeb(response.body as never), url, size), size, finalUrl: response.url || url, partial: response.status === 206 };
}

/** How long one range request may take before the probe gives up on ranges. */
const RANGE_TIMEOUT_MS = 10_000;

/**
 * Reads parts of a download with HTTP range requests, for what sits at the end of a file (an xz
 * index). Rejects when the server does not answer with exactly the range asked for.
 */
export function httpRangeReader(url: string): (position: number, length: number) => Promise<Buffer> {
  return async (position, length) => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), RANGE_TIMEOUT_MS);
    let body: HttpBody | null = null;
    try {
      body = await openHttp(url, { range: [position, position + length - 1], signal: controller.signal });
      if (!body.partial) throw jobError('source-read-error', `${url}: the server does not send parts of files`);
      const chunks: Buffer[] = [];
      let received = 0;
      for await (const chunk of body.stream) {
        chunks.push(chunk as Buffer);
        received += (chunk as Buffer).length;
        if (received >= length) break;
      }
      const bytes = Buffer.concat(chunks).subarray(0, length);
      if (bytes.length !== length) throw jobError('source-read-error', `${url}: the server sent ${bytes.length} of the ${length} bytes asked for`);
      return bytes;
    } finally {
      clearTimeout(timer);
      // Destroyed before the abort, so the abort finds nobody to tell: the answer is already given.
      body?.stream.destroy();
      controller.abort();
    }
  };
}

/** The body, with a break-off or a short body turned into a JobError that says how far it got. */
function checkedBody(body: Readable, url: string, size: number | null): Readable {
  let received = 0;
  const checked = new Readable({
    read() {
      body.resume();
    },
    destroy(error, callback) {
      body.destroy();
      callback(error);
    },
  });
  body.on('data', (chunk: Buffer) => {
    received += chunk.length;
    if (!checked.push(chunk)) body.pause();
  });
  body.on('end', () => {
    if (size !== null && received < size) {
      checked.destroy(jobError('source-truncated', `The download of ${url} stopped after ${received} of ${size} bytes: the connection was closed early.`));
    } else {
      checked.push(null);
    }
  });
  body.on('error', (error) => {
    checked.destroy(jobError('source-truncated', `The download of ${url} broke off after ${received} bytes${size === null ? '' : ` of ${size}`}: ${networkReason(error)}.`));
  });
  return checked;
}
