/**
 * Downloads over http(s), with node:http rather than fetch(): each connection goes to addresses
 * resolved and checked here (see redirect-policy.ts), so a host name cannot resolve to one
 * address for the check and another for the download; redirects are followed one by one, each
 * judged before it is followed; and no Accept-Encoding is sent, so the bytes are the file's own
 * and Content-Length counts them.
 */
import { lookup as lookupHost } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import { jobError, JobError } from '../../../common/domain/failure.js';
import { errorCode, errorText } from '../../../common/domain/error-details.js';
import { localAddress, redirectRefusal } from './redirect-policy.js';

/** An HTTP(S) response body being streamed. */
export interface HttpBody {
  stream: Readable;
  /** Content-Length of the body, when the server sent one. */
  size: number | null;
  /** The address the body came from, after redirects. */
  finalUrl: string;
  /** The server sent only the range asked for (206), not the whole file. */
  partial: boolean;
  /** A 206's Content-Range: where its bytes start, and the whole file's size when the server says it. */
  contentRange: { start: number; total: number | null } | null;
  /**
   * What names this version of the file, for If-Range when a download is resumed: a strong ETag,
   * else Last-Modified; null when the server sends neither.
   */
  validator: string | null;
}

/** Content-Range: bytes START-END/TOTAL (TOTAL may be *). */
function contentRange(header: string | undefined): HttpBody['contentRange'] {
  const match = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(header ?? '');
  if (match === null) return null;
  return { start: Number(match[1]), total: match[2] === '*' ? null : Number(match[2]) };
}

/** A weak ETag (W/"…") may not be used with If-Range (RFC 9110 13.1.5). */
function validatorOf(response: IncomingMessage): string | null {
  const etag = response.headers.etag;
  if (etag !== undefined && !etag.startsWith('W/')) return etag;
  return response.headers['last-modified'] ?? null;
}

/** What openHttp asks for: the whole file, or bytes from START to END (to the end when null), and only if it is still the version named. */
export interface HttpOptions {
  range?: [number, number | null] | undefined;
  /** If-Range: the file's validator from an earlier answer; a server whose file changed sends it whole (200). */
  ifRange?: string | null | undefined;
  signal?: AbortSignal | undefined;
  /**
   * Only addresses on the internet: a host on this computer or the local network (its name
   * resolved, redirects included) is refused with an AddressRefusedError, which ends with this
   * sentence saying why.
   */
  publicOnly?: string | undefined;
}

/** The address is on this computer or the local network, where the download may not go (HttpOptions.publicOnly). */
export class AddressRefusedError extends JobError {
  constructor(message: string) {
    super({ code: 'source-read-error', message });
  }
}

/** The server answered with an error status: the download exists no further than that. */
export class HttpStatusError extends JobError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super({ code: 'source-read-error', message });
  }
}

/**
 * The connection closed, broke or timed out once the server had taken it: the server is there, so
 * asking again is worth it, even before its first answer. A name that does not resolve or a
 * connection refused outright is not this: asked again, the address would usually be just as wrong.
 */
export class ConnectionLostError extends JobError {}

/** Network error codes of a connection that was made and then lost (ConnectionLostError). */
const LOST_CONNECTION: ReadonlySet<string> = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT']);

/** Redirects followed before giving up, as browsers do. */
const MAX_REDIRECTS = 20;

const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/**
 * A download that gets no byte for this long has stalled: the server, or something between, stopped
 * sending without closing the connection, and without a limit the flash would wait forever with
 * its bar frozen. 30 s is far longer than the pauses of a working transfer (a busy server, a
 * mobile network changing cells: a few seconds) and short enough that nobody gives up on a frozen
 * window first. It also bounds the wait for a server to answer at all. Only time spent waiting for
 * the server counts: while the drive is slower than the download, the download is paused on
 * purpose. SLUICE_STALL_TIMEOUT_MS replaces it, for tests only (a stall can then be tested in
 * well under a second); it is read once, when this module loads.
 */
const STALL_TIMEOUT_MS = stallTimeout(process.env['SLUICE_STALL_TIMEOUT_MS']);

function stallTimeout(override: string | undefined): number {
  return override !== undefined && /^\d+$/.test(override) && Number(override) > 0 ? Number(override) : 30_000;
}

function seconds(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`;
}

/** Why a connection failed, in words. */
function networkReason(error: unknown): string {
  const code = errorCode(error);
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the server name could not be resolved (no network, or a typo in the address?)';
    case 'ECONNREFUSED':
      return 'the server refused the connection';
    case 'ECONNRESET':
    case 'EPIPE':
      return 'the connection was closed by the server';
    case 'ETIMEDOUT':
      return 'the connection timed out';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'the server cannot be reached from this network';
    default:
      if (/CERT|SELF_SIGNED|ERR_TLS/.test(code))
        return `the server's certificate is not valid for it (${errorText(error)})`;
      return errorText(error);
  }
}

/** The addresses `url`'s host resolves to, every one of them (a literal address is its own). */
async function resolveHost(url: URL): Promise<LookupAddress[]> {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const family = isIP(host);
  if (family !== 0) return [{ address: host, family }];
  return lookupHost(host, { all: true, order: 'verbatim' });
}

/** A lookup that answers with `addresses` only: the connection goes where the check looked. */
function pinnedLookup(addresses: readonly LookupAddress[]): LookupFunction {
  return ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    const [first] = addresses;
    if (options.all === true) callback(null, addresses);
    else callback(null, first?.address, first?.family);
  }) as LookupFunction;
}

/** Sends one GET to `url`, connecting only to `addresses`; resolves with the response's head. */
function get(
  url: URL,
  addresses: readonly LookupAddress[],
  headers: OutgoingHttpHeaders,
  signal: AbortSignal | undefined,
  typed: string,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, {
      headers,
      agent: false,
      lookup: pinnedLookup(addresses),
      ...(signal === undefined ? {} : { signal }),
    });
    const timer = setTimeout(
      () =>
        request.destroy(
          jobError(
            'source-read-error',
            `Downloading ${typed} failed: the server did not answer within ${seconds(STALL_TIMEOUT_MS)}.`,
          ),
        ),
      STALL_TIMEOUT_MS,
    );
    request.on('response', (response) => {
      clearTimeout(timer);
      resolve(response);
    });
    request.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    request.end();
  });
}

/**
 * Starts downloading `url` (redirects followed where redirect-policy.ts allows) and returns its
 * body as a stream. An HTTP error status is an error here, with the status in the message; so is
 * a body that ends before its Content-Length, breaks off, or stalls, since a short image must
 * never look like a whole one. `range` asks for those bytes only (probing).
 */
export async function openHttp(url: string, options: HttpOptions = {}): Promise<HttpBody> {
  const headers: OutgoingHttpHeaders =
    options.range === undefined ? {} : { Range: `bytes=${options.range[0]}-${options.range[1] ?? ''}` };
  if (options.range !== undefined && options.ifRange !== undefined && options.ifRange !== null)
    headers['If-Range'] = options.ifRange;
  let target = new URL(url);
  let from: { url: URL; address: string | null } | null = null;
  try {
    for (let redirects = 0; ; redirects++) {
      const web = target.protocol === 'http:' || target.protocol === 'https:';
      const addresses = web ? await resolveHost(target) : [];
      const local = options.publicOnly === undefined ? null : localAddress(addresses.map((a) => a.address));
      if (local !== null) {
        const where = from === null ? 'it' : `it leads to ${target.href}, which`;
        throw new AddressRefusedError(`Sluice does not read ${url}: ${where} is ${local}; ${options.publicOnly}`);
      }
      if (from !== null) {
        const refusal = redirectRefusal({
          from: from.url,
          fromAddress: from.address,
          to: target,
          toAddresses: addresses.map((a) => a.address),
        });
        if (refusal !== null) throw jobError('source-read-error', `Downloading ${url} failed: ${refusal}`);
      }
      const response = await get(target, addresses, headers, options.signal, url);
      const status = response.statusCode ?? 0;
      const location = response.headers.location;
      if (REDIRECT_STATUSES.has(status) && location !== undefined) {
        from = { url: target, address: response.socket.remoteAddress ?? null };
        response.destroy();
        if (redirects === MAX_REDIRECTS)
          throw jobError('source-read-error', `Downloading ${url} failed: more than ${MAX_REDIRECTS} redirects.`);
        target = redirectTarget(location, target, url);
        continue;
      }
      if (status < 200 || status > 299) {
        response.destroy();
        const words = `${status}${response.statusMessage ? ` ${response.statusMessage}` : ''}`;
        const hint =
          status === 404 ? ' Check the address.' : status >= 500 ? ' The server has a problem; try again later.' : '';
        throw new HttpStatusError(status, `Downloading ${url} failed: the server answered ${words}.${hint}`);
      }
      const length = response.headers['content-length'];
      const size =
        length !== undefined && /^\d+$/.test(length) && (status === 200 || status === 206) ? Number(length) : null;
      const partial = status === 206;
      return {
        stream: checkedBody(response, url, size),
        size,
        finalUrl: target.href,
        partial,
        contentRange: partial ? contentRange(response.headers['content-range']) : null,
        validator: validatorOf(response),
      };
    }
  } catch (error) {
    if (error instanceof JobError) throw error;
    const failure = {
      code: 'source-read-error' as const,
      message: `Downloading ${url} failed: ${networkReason(error)}.`,
    };
    throw LOST_CONNECTION.has(errorCode(error)) ? new ConnectionLostError(failure) : new JobError(failure);
  }
}

function redirectTarget(location: string, base: URL, typed: string): URL {
  try {
    return new URL(location, base);
  } catch {
    throw jobError(
      'source-read-error',
      `Downloading ${typed} failed: ${base.href} redirects to "${location}", which is not an address.`,
    );
  }
}

/** What readSmall read: the bytes, whether they are the whole answer, and whether it was a range. */
interface SmallAnswer {
  bytes: Buffer;
  /** False when the answer was longer than the limit and reading stopped there. */
  whole: boolean;
  partial: boolean;
}

/** Reads up to `limit` bytes of `url` (or of its `range`), giving up after `timeoutMs` in all. */
async function readSmall(
  url: string,
  limit: number,
  timeoutMs: number,
  options: Pick<HttpOptions, 'range' | 'publicOnly'> = {},
): Promise<SmallAnswer> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  let body: HttpBody | null = null;
  try {
    body = await openHttp(url, { ...options, signal: controller.signal });
    if (body.size !== null && body.size > limit) return { bytes: Buffer.alloc(0), whole: false, partial: body.partial };
    const chunks: Buffer[] = [];
    let received = 0;
    for await (const chunk of body.stream) {
      chunks.push(chunk as Buffer);
      received += (chunk as Buffer).length;
      if (received > limit)
        return { bytes: Buffer.concat(chunks).subarray(0, limit), whole: false, partial: body.partial };
    }
    return { bytes: Buffer.concat(chunks), whole: true, partial: body.partial };
  } finally {
    clearTimeout(timer);
    // Destroyed before the abort, so the abort finds nobody to tell: the answer is already given.
    body?.stream.destroy();
    controller.abort();
  }
}

/** How long one range request may take before the probe gives up on ranges. */
const RANGE_TIMEOUT_MS = 10_000;

/**
 * Reads parts of a download with HTTP range requests, for what sits at the end of a file (an xz
 * index). Rejects when the server does not answer with exactly the range asked for.
 */
export function httpRangeReader(url: string): (position: number, length: number) => Promise<Buffer> {
  return async (position, length) => {
    const answer = await readSmall(url, length, RANGE_TIMEOUT_MS, { range: [position, position + length - 1] });
    if (!answer.partial) throw jobError('source-read-error', `${url}: the server does not send parts of files`);
    if (answer.bytes.length !== length)
      throw jobError(
        'source-read-error',
        `${url}: the server sent ${answer.bytes.length} of the ${length} bytes asked for`,
      );
    return answer.bytes;
  };
}

/**
 * How long a small file beside a download (a checksum list) may take: it is looked for before
 * every flash from a URL, and a server that is slow to say it has none must not hold that up.
 */
const SMALL_FILE_TIMEOUT_MS = 5000;

/**
 * The text of a small file on a server, or null when there is none to be had: missing (404, or
 * any other failure), larger than `limit` bytes, or not complete within SMALL_FILE_TIMEOUT_MS.
 */
export async function readSmallDownload(url: string, limit: number): Promise<string | null> {
  try {
    const answer = await readSmall(url, limit, SMALL_FILE_TIMEOUT_MS);
    return answer.whole ? answer.bytes.toString('utf8') : null;
  } catch {
    return null;
  }
}

/**
 * The whole of a small download (a catalogue document) of at most `limit` bytes, read within
 * `timeoutMs`. Unlike readSmallDownload it says why it failed: the caller tells "offline" from
 * "no such file" and from "too large" by it.
 */
export async function readBoundedDownload(
  url: string,
  limit: number,
  timeoutMs: number,
  options: Pick<HttpOptions, 'publicOnly'> = {},
): Promise<Buffer> {
  const started = performance.now();
  let answer: SmallAnswer;
  try {
    answer = await readSmall(url, limit, timeoutMs, options);
  } catch (error) {
    if (performance.now() - started >= timeoutMs)
      throw jobError('source-read-error', `Downloading ${url} failed: it took more than ${seconds(timeoutMs)}.`);
    throw error;
  }
  if (!answer.whole)
    throw jobError('source-corrupt', `${url} is larger than ${limit} bytes, more than Sluice reads of such a file.`);
  return answer.bytes;
}

/**
 * The body, with a break-off, a short body or a stall turned into a JobError that says how far it
 * got. The stall clock runs only while this stream wants more and the server sends nothing; it
 * stops while the reader applies back-pressure (the drive is slower than the download).
 */
function checkedBody(body: IncomingMessage, url: string, size: number | null): Readable {
  let received = 0;
  let ended = false;
  let timer: NodeJS.Timeout | null = null;
  const stopClock = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
  };
  const stalled = () => {
    const of = size === null ? '' : ` of ${size}`;
    checked.destroy(
      jobError(
        'source-read-error',
        `The download of ${url} stalled: the server stopped sending at byte ${received}${of}, and sent nothing for ${seconds(STALL_TIMEOUT_MS)}.`,
      ),
    );
  };
  // Restarted for every chunk that arrives: refresh() re-arms the one timer without a new one.
  const startClock = () => {
    if (timer === null) timer = setTimeout(stalled, STALL_TIMEOUT_MS);
    else timer.refresh();
  };
  const checked = new Readable({
    read() {
      body.resume();
      if (!ended) startClock();
    },
    destroy(error, callback) {
      stopClock();
      body.destroy();
      callback(error);
    },
  });
  body.on('data', (chunk: Buffer) => {
    received += chunk.length;
    if (checked.push(chunk)) startClock();
    else {
      stopClock();
      body.pause();
    }
  });
  body.on('end', () => {
    ended = true;
    stopClock();
    if (size !== null && received < size) {
      checked.destroy(
        jobError(
          'source-truncated',
          `The download of ${url} stopped after ${received} of ${size} bytes: the connection was closed early.`,
        ),
      );
    } else {
      checked.push(null);
    }
  });
  const brokeOff = (error: unknown) => {
    checked.destroy(
      jobError(
        'source-truncated',
        `The download of ${url} broke off after ${received} bytes${size === null ? '' : ` of ${size}`}: ${networkReason(error)}.`,
      ),
    );
  };
  body.on('error', brokeOff);
  // A connection closed before the end of a body without a length: no 'end', and no error either.
  body.on('close', () => {
    if (!ended && !checked.destroyed) brokeOff(new Error('the connection was closed'));
  });
  return checked;
}
