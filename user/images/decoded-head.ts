import { readFully } from '../../node/io.js';
import type { DecodePlan } from '../../common/contracts/decoder-protocol.js';
import { startDecoder } from './decoder-launch.js';

/**
 * The first `length` bytes of the decoded image (for its partition table), from a decoder run
 * that is stopped as soon as they have arrived. Null when the image is shorter or the decoder
 * fails: a probe reports what it can, and the flash itself names the problem.
 */
export async function readDecodedHead(plan: DecodePlan, length: number): Promise<Buffer | null> {
  const decoder = await startDecoder({ ...plan, map: null, sha256: null, sha256From: null, sendImage: true, freeSpace: false }, 'descriptor');
  const head = Buffer.alloc(length);
  try {
    const source = decoder.source;
    if (typeof source === 'number') {
      const got = await readFully(source, head, 0, length, null);
      return got === length ? head : null;
    }
    if (source === null) return null;
    let got = 0;
    for await (const chunk of source) {
      const bytes = chunk as Buffer;
      got += bytes.copy(head, got, 0, Math.min(bytes.length, length - got));
      if (got === length) return head;
    }
    return null;
  } catch {
    return null;
  } finally {
    await decoder.stop();
  }
}
