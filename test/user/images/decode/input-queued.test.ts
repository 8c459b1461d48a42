/**
 * The source's queue, which tells the app whether a download waits for its decoder (the decoder is
 * the bottleneck) or the decoder waits for the download. A system tool takes the bytes through its
 * stdin, and when the tool is the slower side they wait in that stdin's buffer: the queue counts
 * them, though the source stream's own buffers may be empty at that moment.
 */
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, expect, it } from 'vitest';
import { openInput, SOURCE_CHUNK } from '../../../../user/images/decode/input.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

async function sourceFile(size: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-queued-'));
  dirs.push(dir);
  const path = join(dir, 'image.img');
  writeFileSync(path, randomBytes(size));
  return path;
}

it('bytes held by a stalled consumer count as queued, with the stream itself drained', async () => {
  // Two read chunks: once both are read, the source stream holds nothing, and all that waits is in the consumer.
  const path = await sourceFile(2 * SOURCE_CHUNK);
  const input = await openInput({ kind: 'file', path }, { hash: false });
  // A tool that takes one chunk and then stops reading: the next waits in its writable buffer.
  let taken = 0;
  const stalled = new Writable({
    highWaterMark: 1,
    write(chunk: Buffer, _encoding, callback) {
      if (taken > 0) return void setTimeout(callback, 60_000).unref();
      taken += chunk.length;
      callback();
    },
  });
  void input.feed(stalled).catch(() => undefined);
  await expect.poll(() => input.bytesRead(), { timeout: 5000 }).toBe(2 * SOURCE_CHUNK);
  await expect.poll(() => stalled.writableLength, { timeout: 5000 }).toBeGreaterThan(0);
  // Every byte read and not taken is queued, wherever it waits.
  expect(input.bytesRead() - taken).toBeGreaterThan(0);
  expect(input.queued()).toBeGreaterThanOrEqual(input.bytesRead() - taken);
  stalled.destroy();
});
