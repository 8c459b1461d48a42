import type { Readable, Writable } from 'node:stream';
import * as v from 'valibot';
import { encodeFrame, FrameError, FrameReader } from './framing.js';

/** Why a channel rejected what its peer sent. */
export class ProtocolError extends Error {}

/**
 * The two byte streams a channel runs over: one end of an inherited socket pair (the same stream
 * twice), or a pair of FIFOs, or a connected named pipe. Never a listening socket.
 */
export interface ChannelStreams {
  input: Readable;
  output: Writable;
}

/**
 * A framed, schema-checked message channel over byte streams that are handed to it already
 * connected. It never listens or binds.
 */
export class Channel<In, Out> {
  private readonly reader = new FrameReader();
  private readonly input: Readable;
  private readonly output: Writable;

  constructor(
    streams: ChannelStreams,
    private readonly schema: v.GenericSchema<unknown, In>,
    handlers: { message(message: In): void; error(error: ProtocolError): void; close(): void },
  ) {
    this.input = streams.input;
    this.output = streams.output;
    this.input.on('data', (chunk: Buffer) => {
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
    this.input.on('close', () => handlers.close());
    this.input.on('end', () => handlers.close());
    this.input.on('error', () => handlers.close());
    // A peer that went away shows up on the input side; a failed write must not crash the process.
    this.output.on('error', () => undefined);
  }

  send(message: Out): Promise<void> {
    return new Promise((resolve) => {
      if (this.output.destroyed || !this.output.writable) return resolve();
      this.output.write(encodeFrame(message), () => resolve());
    });
  }

  close(): void {
    this.output.end();
    if (this.input !== (this.output as unknown)) this.input.destroy();
  }
}
