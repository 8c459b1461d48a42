import { KiB } from '../common/domain/units.js';
import { xxh64Over, type RangeHasher } from './xxh64.js';

/** WebAssembly memory grows in 64 KiB pages. */
const WASM_PAGE = 64 * KiB;

/** The job's one buffer, and a hash function that reads it in place. */
export interface JobMemory {
  bytes: Buffer;
  /** XXH64 of `view`, which must be a view of `bytes`. */
  hash(view: Buffer): bigint;
}

/**
 * Allocates the job's one I/O buffer, zero-filled and page-aligned, so that O_DIRECT accepts it.
 *
 * Node's own Buffers are not aligned: Buffer.alloc, Buffer.allocUnsafeSlow and sub-buffers of them
 * all fail O_DIRECT writes with EINVAL (measured under Node 24). A WebAssembly.Memory is backed by
 * its own mmap, so its base is page-aligned, and it needs no native code, which matters because
 * the same engine runs under Node and inside Electron. The hash runs in the same memory.
 */
export function allocateJobMemory(bytes: number): JobMemory {
  const memory = alignedMemory(bytes);
  const buffer = Buffer.from(memory.buffer, 0, bytes);
  const hashRange: RangeHasher = xxh64Over(memory);
  return {
    bytes: buffer,
    hash(view) {
      if (view.buffer !== memory.buffer) throw new Error('hash(): the view is not in the job memory');
      return hashRange(view.byteOffset, view.length);
    },
  };
}

/** A zero-filled, page-aligned memory of at least `bytes` (see allocateJobMemory for why). */
export function alignedMemory(bytes: number): WebAssembly.Memory {
  const pages = Math.ceil(bytes / WASM_PAGE);
  return new WebAssembly.Memory({ initial: pages, maximum: pages });
}

export function alignDown(value: number, alignment: number): number {
  return value - (value % alignment);
}

export function alignUp(value: number, alignment: number): number {
  return alignDown(value + alignment - 1, alignment);
}
