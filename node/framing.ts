import { MAX_FRAME_BYTES } from '../common/contracts/helper-protocol.js';

/** Each frame is a 4-byte big-endian length, then that many bytes of UTF-8 JSON. */
const HEADER_BYTES = 4;

export function encodeFrame(message: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(message), 'utf8');
  if (body.length > MAX_FRAME_BYTES)
    throw new Error(`message of ${body.length} bytes exceeds the ${MAX_FRAME_BYTES}-byte frame cap`);
  const frame = Buffer.allocUnsafe(HEADER_BYTES + body.length);
  frame.writeUInt32BE(body.length, 0);
  body.copy(frame, HEADER_BYTES);
  return frame;
}

export class FrameError extends Error {}

/**
 * Reassembles frames from a byte stream. A frame over the cap is an error before its body is
 * buffered, so a peer cannot make the reader hold more than one capped frame in memory.
 */
export class FrameReader {
  private pending: Buffer = Buffer.alloc(0);

  /** Feeds bytes; returns every complete frame's parsed JSON. Throws FrameError on a bad frame. */
  push(chunk: Buffer): unknown[] {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const messages: unknown[] = [];
    while (this.pending.length >= HEADER_BYTES) {
      const length = this.pending.readUInt32BE(0);
      if (length > MAX_FRAME_BYTES)
        throw new FrameError(`frame of ${length} bytes exceeds the ${MAX_FRAME_BYTES}-byte cap`);
      if (this.pending.length < HEADER_BYTES + length) break;
      const body = this.pending.subarray(HEADER_BYTES, HEADER_BYTES + length).toString('utf8');
      this.pending = this.pending.subarray(HEADER_BYTES + length);
      try {
        messages.push(JSON.parse(body));
      } catch {
        throw new FrameError('frame is not valid JSON');
      }
    }
    return messages;
  }
}
