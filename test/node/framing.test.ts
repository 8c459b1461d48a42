import { describe, expect, it } from 'vitest';
import { MAX_FRAME_BYTES } from '../../common/contracts/helper-protocol.js';
import { encodeFrame, FrameError, FrameReader } from '../../node/framing.js';

describe('length-prefixed frames', () => {
  it('reassembles messages split across and packed into chunks', () => {
    const stream = Buffer.concat([encodeFrame({ type: 'a', n: 1 }), encodeFrame({ type: 'b', text: 'ü'.repeat(100) })]);
    const reader = new FrameReader();
    const seen: unknown[] = [];
    for (let i = 0; i < stream.length; i += 7) seen.push(...reader.push(stream.subarray(i, i + 7)));
    expect(seen).toEqual([
      { type: 'a', n: 1 },
      { type: 'b', text: 'ü'.repeat(100) },
    ]);
  });

  it('rejects an oversized frame from its header alone, before buffering its body', () => {
    const header = Buffer.alloc(4);
    header.writeUInt32BE(MAX_FRAME_BYTES + 1, 0);
    expect(() => new FrameReader().push(header)).toThrow(FrameError);
  });

  it('rejects a frame that is not JSON', () => {
    const body = Buffer.from('{nope');
    const header = Buffer.alloc(4);
    header.writeUInt32BE(body.length, 0);
    expect(() => new FrameReader().push(Buffer.concat([header, body]))).toThrow(/not valid JSON/);
  });

  it('refuses to send a message over the cap', () => {
    expect(() => encodeFrame({ pad: 'x'.repeat(MAX_FRAME_BYTES) })).toThrow(/frame cap/);
  });
});
