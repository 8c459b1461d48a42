import { KiB } from '../common/units.js';

/** WebAssembly memory grows in 64 KiB pages. */
const WASM_PAGE = 64 * KiB;

/**
 * Allocates the job's one I/O buffer, zero-filled and page-aligned, so that O_DIRECT accepts it.
 *
 * Node's own Buffers are not aligned: Buffer.alloc, Buffer.allocUnsafeSlow and sub-buffers of them
 * all fail O_DIRECT writes with EINVAL (measured under Node 24). A WebAssembly.Memory is backed by
 * its own mmap, so its base is page-aligned, and it needs no native code, which matters because
 * the same engine runs under Node and inside Electron.
 */
export function allocateAlignedBuffer(bytes: number): Buffer {
  const pages = Math.ceil(bytes / WASM_PAGE);
  const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
  return Buffer.from(memory.buffer, 0, bytes);
}

export function alignDown(value: number, alignment: number): number {
  return value - (value % alignment);
}

export function alignUp(value: number, alignment: number): number {
  return alignDown(value + alignment - 1, alignment);
}
