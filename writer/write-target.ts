/**
 * What the writing loop (flash.ts) and verification (verify-written.ts) need of one target: a
 * whole disk opened with its checks (target-device.ts) or a regular file (file-target.ts).
 */
export interface WriteTarget {
  /** As the user named it; results and progress carry it. */
  readonly path: string;
  /** Every write and read-back is laid out in multiples of this many bytes. */
  readonly blockSize: number;
  /** Bytes the target holds (a disk's size); null for a file, which grows. */
  readonly capacity: number | null;
  /** The preferred request size in bytes; 0 when the target does not say. */
  readonly optimalIoSize: number;
  /**
   * Writes `length` bytes of `buffer` at `position`. `scratch` is an aligned block-sized region
   * for a partial last block.
   */
  write(buffer: Buffer, offset: number, length: number, position: number, scratch: Buffer): Promise<void>;
  /** Reads back `length` bytes at `position`, past any cache, into `buffer` (room for the padded block). */
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<number>;
  sync(): Promise<void>;
  close(): Promise<void>;
}
