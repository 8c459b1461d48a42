import type { Duplex } from 'node:stream';
import * as v from 'valibot';
import { encodeFrame, FrameError, FrameReader } from './framing.js';

/** Why a channel rejected what its peer sent. */
export class ProtocolError extends Error {}

/**
 * A framed, schema-checked message channel over a byte stream (an inherited socket, or a FIFO
 * pair). It never listens or binds: both ends are handed to it already connected.
 */
export class Channel<In, Out> {
  private readonly reader = new FrameReader();

  constructor(
    private readonly stream: Duplex,
    private readonly schema: v.GenericSchema<unknown, In>,
    handlers: { message(message: In): void; error(error: ProtocolError): void; close(): void },
  ) {
    stream.on('data', (chunk: Buffer) => {
      let raw: unknown[];
      try {
        raw = this.reader.push(chunk);
      } catch (error) {
        handlers.error(new ProtocolError(error instanceof FrameError ? error.message : String(error)));
        return;
      }
      for (const item of raw) {
        const parsed = v.safeParse(this.schema, item);
        if (parsed.success) handlers.message(parsed.output);
        else handlers.error(new ProtocolError(`invalid message: ${parsed.issues.map((i) => i.message).join('; ')}`));
      }
    });
    stream.on('close', () => handlers.close());
    stream.on('end', () => handlers.close());
    stream.on('error', () => handlers.close());
  }

  send(message: Out): Promise<void> {
    return new Promise((resolve) => {
      if (this.stream.destroyed || !this.stream.writable) return resolve();
      this.stream.write(encodeFrame(message), () => resolve());
    });
  }

  close(): void {
    this.stream.end();
  }
}
