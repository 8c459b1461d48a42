import { findFreeSpace, type FreeSpace } from './find-free-space.js';
import { StreamedImage } from './image-reader.js';

/**
 * Free space found in an image as it streams past (decode/image-sink.ts feeds it every chunk
 * before sending it on): what it hands back from a chunk was learned from that chunk or before,
 * and the sink leaves out only the part of it that lies ahead.
 */
export class StreamFreeSpace {
  private readonly image = new StreamedImage();
  private found: FreeSpace[] = [];

  constructor(imageSize: number | null) {
    // A reader that fails (a bug: the image's bytes cannot make it throw) finds nothing more;
    // what it found before stands, as it was proven before the failure.
    void findFreeSpace(this.image.read, imageSize, (free) => this.found.push(free))
      .catch(() => undefined)
      .finally(() => this.image.done());
  }

  /** True once the readers have finished: no chunk can tell them more. */
  get done(): boolean {
    return this.image.idle && this.found.length === 0;
  }

  /** Hands the readers image bytes at `position`; resolves with what they found up to them. */
  async feed(chunk: Buffer, position: number): Promise<FreeSpace[]> {
    await this.image.feed(chunk, position);
    return this.found.splice(0);
  }

  /** The image has ended. */
  end(): void {
    this.image.end();
  }
}
