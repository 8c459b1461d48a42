import type { Readable } from 'node:stream';
import { closeFd, readFully } from './io.js';

/**
 * Bytes read front to back from a descriptor (a pipe, a FIFO, a file) or a stream (a socket, a
 * named pipe, node:zlib's output), through one interface: the readers above them (the backup
 * writer, the decoded-image reader) do not care which the platform gave them.
 */
export class ByteSource {
  private leftover: Buffer | null = null;
  private readonly iterator: AsyncIterator<Buffer> | null;

  constructor(private readonly source: number | Readable) {
    this.iterator = typeof source === 'number' ? null : (source[Symbol.asyncIterator]() as AsyncIterator<Buffer>);
  }

  /** Reads up to `length` bytes into `into` from its start; fewer only at the end. */
  async read(into: Buffer, length: number): Promise<number> {
    if (typeof this.source === 'number') return readFully(this.source, into, 0, length, null);
    let got = 0;
    while (got < length) {
      const chunk = this.leftover ?? (await this.next());
      if (chunk === null) break;
      const n = chunk.copy(into, got, 0, Math.min(chunk.length, length - got));
      this.leftover = n < chunk.length ? chunk.subarray(n) : null;
      got += n;
    }
    return got;
  }

  /** Closes the descriptor, or destroys the stream: the other end learns that nobody reads any more. */
  async close(): Promise<void> {
    if (typeof this.source === 'number') await closeFd(this.source);
    else this.source.destroy();
  }

  private async next(): Promise<Buffer | null> {
    const step = await this.iterator?.next();
    return step === undefined || step.done === true ? null : step.value;
  }
}
