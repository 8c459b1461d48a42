/**
 * A decoder process started before its plan is known (WarmDecoder), as `sluice flash` starts one
 * while the image is probed: the plan runs on it, or it is stopped. Watched through /proc.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { expect, it } from 'vitest';
import { MiB } from '../../../common/domain/units.js';
import { builtDecoderLaunch } from '../../support/built-modules.js';
import { scratchDir } from '../../support/loop-device.js';
import { findDescendants, isDecoder, waitForDescendant, waitForExit } from '../../support/processes.js';
import type { DecodePlan } from '../../../common/contracts/decoder-protocol.js';

/** A .gz file's plan: decode it whole, with node:zlib, into the output. */
function gzipPlan(path: string): DecodePlan {
  return {
    location: { kind: 'file', path },
    format: 'gzip',
    imageSize: null,
    sha256: null,
    sha256From: null,
    map: null,
    zipEntry: null,
    sendImage: true,
    systemTools: false,
    freeSpace: false,
  };
}

/** A .gz of `bytes` random bytes in a scratch directory. */
function gzipImage(bytes: number): string {
  const path = join(scratchDir(), 'image.img.gz');
  writeFileSync(path, gzipSync(randomBytes(bytes), { level: 1 }));
  return path;
}

/** Everything the decoder's pipe carries, until its end. */
function drained(fd: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let bytes = 0;
    createReadStream('', { fd, autoClose: false })
      .on('data', (chunk) => (bytes += chunk.length))
      .on('end', () => resolve(bytes))
      .on('error', reject);
  });
}

it('runs a plan on the decoder process started before it, and starts no other', async () => {
  const path = gzipImage(2 * MiB);
  const { startDecoder, WarmDecoder } = await builtDecoderLaunch();
  const warm = new WarmDecoder('descriptor');
  const started = await waitForDescendant(process.pid, isDecoder);
  const decoder = await startDecoder(gzipPlan(path), 'descriptor', undefined, undefined, warm);
  // It waits for the decoded bytes to be read: the one decoder there is, is the one started first.
  expect(findDescendants(process.pid, isDecoder)).toEqual([started]);
  // Taken: disposing of it now must not stop the decoding.
  await warm.dispose();
  const decoded = drained(Number(decoder.source));
  expect(await decoder.ended).toMatchObject({ status: 'ok', bytes: 2 * MiB });
  expect(await decoded).toBe(2 * MiB);
  await decoder.stop();
  await waitForExit(started, 5000);
});

it('stops a decoder started before its plan when nobody takes it', async () => {
  const { WarmDecoder } = await builtDecoderLaunch();
  const warm = new WarmDecoder('descriptor');
  const pid = await waitForDescendant(process.pid, isDecoder);
  await warm.dispose();
  await waitForExit(pid, 5000);
});

it('keeps a decoder started for an image to a plan that sends one', async () => {
  const { WarmDecoder } = await builtDecoderLaunch();
  const warm = new WarmDecoder('descriptor');
  try {
    // A raw file the helper reads itself, whose checksum alone is checked: a process of its own.
    expect(
      warm.take({ ...gzipPlan('/nonexistent'), format: 'raw', sendImage: false, sha256: '0'.repeat(64) }, 'descriptor'),
    ).toBeNull();
    expect(warm.take(gzipPlan('/nonexistent'), 'stream')).toBeNull();
  } finally {
    await warm.dispose();
  }
});

it('fails the decoding, without waiting forever, when the decoder started before its plan died first', async () => {
  const path = gzipImage(1 * MiB);
  const { startDecoder, WarmDecoder } = await builtDecoderLaunch();
  const warm = new WarmDecoder('descriptor');
  const pid = await waitForDescendant(process.pid, isDecoder);
  process.kill(pid, 'SIGKILL');
  await waitForExit(pid, 5000);
  // Its 'close' has come and gone before anyone listened for the plan's end.
  await new Promise((resolve) => setTimeout(resolve, 100));
  const decoder = await startDecoder(gzipPlan(path), 'descriptor', undefined, undefined, warm);
  expect(await decoder.ended).toMatchObject({
    status: 'failed',
    failure: { code: 'source-read-error', message: expect.stringContaining('killed by SIGKILL') as unknown },
  });
  await decoder.stop();
});
