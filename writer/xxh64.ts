import { XXH64_WASM_BASE64 } from './xxh64-module.js';

/** Hashes `length` bytes at `offset` of the memory the hasher was made for. */
export type RangeHasher = (offset: number, length: number) => bigint;

let compiled: WebAssembly.Module | undefined;

/**
 * XXH64 running in WebAssembly directly over `memory` (see xxh64.wat). It needs no native addon
 * (the N-API one cost 7.8 MB of RSS just to load) and no copy: it reads the job's buffer where the
 * data already is. Measured here: see test/bench.
 */
export function xxh64Over(memory: WebAssembly.Memory): RangeHasher {
  compiled ??= new WebAssembly.Module(Buffer.from(XXH64_WASM_BASE64, 'base64'));
  const instance = new WebAssembly.Instance(compiled, { sluice: { memory } });
  const xxh64 = instance.exports['xxh64'] as (ptr: number, len: number, seed: bigint) => bigint;
  // WebAssembly's i64 arrives as a signed BigInt; XXH64 is defined as unsigned.
  return (offset, length) => BigInt.asUintN(64, xxh64(offset, length, 0n));
}
