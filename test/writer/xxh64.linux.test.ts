import { execFileSync } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileXxh64, moduleSource, MODULE_PATH, WAT_PATH } from '../../build/scripts/compile-wasm.js';
import { allocateJobMemory } from '../../writer/job-memory.js';
import { scratchDir } from '../support/loop-device.js';

describe('xxh64 in WebAssembly over the job memory', () => {
  it('the committed module is exactly what xxh64.wat compiles to', async () => {
    expect(readFileSync(MODULE_PATH, 'utf8')).toBe(moduleSource(await compileXxh64(WAT_PATH)));
  });

  it('agrees with the reference xxh64sum on every length class and at unaligned offsets', () => {
    const memory = allocateJobMemory(1 << 20);
    randomFillSync(memory.bytes);
    const file = join(scratchDir(), 'view.bin');
    // Lengths that exercise each tail path (bytes, a 4-byte word, 8-byte words, 32-byte stripes).
    for (const [offset, length] of [
      [0, 0],
      [0, 1],
      [3, 3],
      [0, 4],
      [1, 7],
      [0, 8],
      [5, 31],
      [0, 32],
      [7, 33],
      [0, 100],
      [13, 4099],
      [0, 1 << 19],
      [1, (1 << 20) - 1],
    ] as const) {
      const view = memory.bytes.subarray(offset, offset + length);
      writeFileSync(file, view);
      const reference = execFileSync('xxh64sum', [file], { encoding: 'utf8' }).split(' ')[0];
      expect(memory.hash(view).toString(16).padStart(16, '0')).toBe(reference);
    }
  });

  it('refuses a view that is not in its memory', () => {
    expect(() => allocateJobMemory(4096).hash(Buffer.alloc(8))).toThrow(/not in the job memory/);
  });
});
