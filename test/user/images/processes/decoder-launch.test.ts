/**
 * The decoder process as launched for a flash (built): what it reports about the source besides
 * the image bytes.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { expect, it } from 'vitest';
import { MiB } from '../../../../common/domain/units.js';
import { builtDecoderLaunch } from '../../../support/built-modules.js';
import { scratchDir } from '../../../support/loop-device.js';

it('counts every source byte read before it ends, though decoding took less than one progress interval', async () => {
  const dir = scratchDir();
  const path = join(dir, 'image.img.gz');
  const packed = gzipSync(randomBytes(1 * MiB), { level: 1 });
  writeFileSync(path, packed);
  const { startDecoder } = await builtDecoderLaunch();
  const decoder = await startDecoder(
    {
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
    },
    'descriptor',
  );
  let decoded = 0;
  // stop() closes the pipe's read end itself.
  createReadStream('', { fd: Number(decoder.source), autoClose: false }).on(
    'data',
    (chunk) => (decoded += chunk.length),
  );
  const end = await decoder.ended;
  expect(end, JSON.stringify(end)).toMatchObject({ status: 'ok', bytes: 1 * MiB });
  expect(decoded).toBe(1 * MiB);
  // The app's download line shows this number as the last word on the download.
  expect(decoder.sourceBytes()).toBe(packed.length);
  await decoder.stop();
});
