/**
 * A download that survives a dropped connection: when the body breaks off, stalls, or the server
 * answers a retry with a passing error, it is asked again for the rest (HTTP Range, with If-Range
 * so that a file that changed meanwhile is never spliced onto the old one), up to MAX_RETRIES
 * times in a row with a growing pause, and the reader sees one unbroken stream. Only a server that
 * does not send parts of files ends it, as before.
 *
 * With a cache file (`tee`), every byte is also appended to `<key>.part` as it passes (the image
 * cache's partial download, user/cache/image-cache.ts), and a later try starts by reading that
 * file back and asks the server only for the rest. The file becomes the cached image (commit)
 * only once the decoder has checked what it read; a download whose checksum is wrong is deleted
 * (discard); anything else leaves it to be resumed.
 */
import { createReadStream } from 'node:fs';
import { open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DownloadTee } from '../../../common/contracts/decoder-protocol.js';
import { jobError, JobError } from '../../../common/domain/failure.js';
import { MiB } from '../../../common/domain/units.js';
import { ConnectionLostError, HttpStatusError, openHttp, type HttpBody } from './http-source.js';

/** Tries in a row that got no byte further before the download fails: enough to ride out a flaky Wi-Fi link or a server restart. */
export const MAX_RETRIES = 5;

/**
 * The pause before the first retry, doubled before each next one: 1, 2, 4, 8, 16 s, so a network
 * that comes back within half a minute (a Wi-Fi roam, a router restart) loses the flash nothing.
 * SLUICE_RETRY_PAUSE_MS replaces it, for tests only (a drop is then resumed at once).
 */
const FIRST_PAUSE_MS = pauseOverride(process.env['SLUICE_RETRY_PAUSE_MS']) ?? 1000;

function pauseOverride(value: string | undefined): number | null {
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : null;
}

/** Statuses that say "not now" rather than "no": worth asking again. */
const PASSING_STATUSES: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504]);

/** Why a download cannot go on where it broke off: the server does not resume, or the file changed. */
class CannotResume extends Error {}

function retryable(error: unknown): boolean {
  if (!(error instanceof JobError)) return false;
  return error instanceof HttpStatusError ? PASSING_STATUSES.has(error.status) : true;
}

/** The break that ended the download, and why it could not be mended, in one failure. */
function unresumable(broke: unknown, why: CannotResume): JobError {
  const failure =
    broke instanceof JobError ? broke.failure : { code: 'source-truncated' as const, message: String(broke) };
  return new JobError({
    ...failure,
    message: `${failure.message.replace(/\.$/, '')}; it cannot go on from there: ${why.message}.`,
  });
}

/** What the reader of a download is told as it goes. */
export interface DownloadEvents {
  /** The connection failed at `offset` and is asked again (`attempt` of MAX_RETRIES), after `pauseMs`. */
  retrying(offset: number, attempt: number, pauseMs: number, why: string): void;
}

export interface Download {
  stream: Readable;
  /** The whole file's size, when the server said it. */
  size: number | null;
  /** Bytes taken from the cache's partial file rather than the server. */
  resumedFrom: number;
  /** The checks passed: the partial file becomes the cached image. */
  commit(): Promise<void>;
  /** The bytes are wrong: the partial file is deleted, so no later try resumes them. */
  discard(): Promise<void>;
}

/** The whole file's size from an answer: a 200's length, or the total of a 206's Content-Range. */
function totalOf(body: HttpBody): number | null {
  return body.partial ? (body.contentRange?.total ?? null) : body.size;
}

/** Asks for `url` from `offset` on; checks that the answer continues exactly there. */
async function resume(url: string, offset: number, validator: string | null, total: number | null): Promise<HttpBody> {
  const body = await openHttp(url, { range: [offset, null], ifRange: validator });
  const refuse = (why: string) => {
    body.stream.destroy();
    return new CannotResume(why);
  };
  if (!body.partial)
    throw refuse(
      validator === null
        ? 'the server does not send parts of files'
        : 'the server sent the whole file again (it does not send parts of files, or the file changed on it)',
    );
  if (body.contentRange?.start !== offset)
    throw refuse(`the server sent bytes from ${body.contentRange?.start ?? 'an unknown place'} on, not from ${offset}`);
  if (total !== null && body.contentRange.total !== null && body.contentRange.total !== total)
    throw refuse(`the file is now ${body.contentRange.total} bytes, not ${total}: it changed on the server`);
  return body;
}

/**
 * The first answer, continuing a partial file of `have` bytes when the server allows; with
 * `have` 0, or a server that sends the whole file, from the start (the partial file is then
 * emptied: nothing has been read from it yet).
 */
async function first(url: string, have: number): Promise<{ body: HttpBody; from: number }> {
  if (have === 0) return { body: await openHttp(url), from: 0 };
  try {
    const body = await openHttp(url, { range: [have, null] });
    if (body.partial && body.contentRange?.start === have) return { body, from: have };
    body.stream.destroy();
  } catch (error) {
    // 416: the partial file is as long as the file or longer (another file now): start again.
    if (!(error instanceof HttpStatusError && error.status === 416)) throw error;
  }
  return { body: await openHttp(url), from: 0 };
}

/**
 * The first answer, asked for again as a later part would be when the connection is lost before
 * it, or the server answers "not now" (up to MAX_RETRIES times, with the same pauses). Anything
 * else (a name that does not resolve, a refused connection, a 404) fails at once.
 */
async function firstWithRetries(
  url: string,
  have: number,
  events: DownloadEvents,
): Promise<{ body: HttpBody; from: number }> {
  for (let failures = 0; ; failures++) {
    try {
      return await first(url, have);
    } catch (error) {
      const passing = error instanceof HttpStatusError && PASSING_STATUSES.has(error.status);
      if (!(error instanceof ConnectionLostError) && !passing) throw error;
      if (failures >= MAX_RETRIES) throw gaveUp(url, have, error.message);
      const pause = FIRST_PAUSE_MS * 2 ** failures;
      events.retrying(have, failures + 1, pause, error.message);
      await sleep(pause);
    }
  }
}

/** The partial file's length, or 0 when there is none. */
async function partialLength(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0;
  }
}

/**
 * Opens `url` for reading front to back, resuming after dropped connections, and saving into
 * `tee` when given (see above). Rejects as openHttp does when the first answer fails for good.
 */
export async function openDownload(url: string, tee: DownloadTee | null, events: DownloadEvents): Promise<Download> {
  const have = tee === null ? 0 : await partialLength(tee.partial);
  const opened = await firstWithRetries(url, have, events);
  // Its connection may drop before the reader gets to it (the partial file is read back first, or
  // the reader is still starting): the stream keeps the error, and reading it then throws it into
  // the retries below. Unheard at the time, it would end the process.
  opened.body.stream.on('error', () => undefined);
  const total = totalOf(opened.body);
  const validator = opened.body.validator;
  let file: FileHandle | null = null;
  if (tee !== null) {
    file = await open(tee.partial, opened.from === 0 ? 'w' : 'a');
    if (opened.from === 0) await file.truncate(0);
  }
  const output = file;

  async function* bytes(): AsyncGenerator<Buffer> {
    try {
      if (tee !== null && opened.from > 0) {
        for await (const chunk of createReadStream(tee.partial, {
          start: 0,
          end: opened.from - 1,
          highWaterMark: 1 * MiB,
        }))
          yield chunk as Buffer;
      }
      let offset = opened.from;
      let body = opened.body;
      let failures = 0;
      for (;;) {
        try {
          for await (const chunk of body.stream) {
            const data = chunk as Buffer;
            if (output !== null) await output.write(data);
            offset += data.length;
            failures = 0;
            yield data;
          }
          return;
        } catch (error) {
          body.stream.destroy();
          let failure = error;
          for (;;) {
            if (!retryable(failure)) throw failure;
            if (failures >= MAX_RETRIES) throw gaveUp(url, offset, (failure as Error).message);
            failures += 1;
            const pause = FIRST_PAUSE_MS * 2 ** (failures - 1);
            events.retrying(offset, failures, pause, (failure as Error).message);
            await sleep(pause);
            try {
              body = await resume(url, offset, validator, total);
              break;
            } catch (again) {
              if (again instanceof CannotResume) throw unresumable(error, again);
              failure = again;
            }
          }
        }
      }
    } finally {
      await output?.close();
    }
  }

  return {
    stream: Readable.from(bytes(), { objectMode: false }),
    size: total,
    resumedFrom: opened.from,
    commit: async () => {
      if (tee !== null) await rename(tee.partial, tee.complete);
    },
    discard: async () => {
      if (tee !== null) await rm(tee.partial, { force: true });
    },
  };
}

/** A download given up on: the first try and MAX_RETRIES more got no further than `offset`. */
function gaveUp(url: string, offset: number, last: string): JobError {
  return jobError(
    'source-truncated',
    `The download of ${url} stopped at byte ${offset}, and ${MAX_RETRIES} more tries got no further, so Sluice gave up. The last: ${last}`,
  );
}
