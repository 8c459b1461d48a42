/**
 * The thread of pipe-reader.ts: reads a kernel pipe with blocking reads into the shared slots, one
 * slot at a time, and says which slot holds how many bytes. A slot is filled again only once the
 * main thread has marked it free. Nothing else runs on this thread, so a read that blocks, or
 * returns a few KiB, costs one system call and nothing more.
 */
import { readSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { FREE, FULL, type PipeReaderData, type PipeReaderMessage } from './pipe-reader-slots.js';

const { fd, states: stateMemory, data, slotBytes } = workerData as PipeReaderData;
const states = new Int32Array(stateMemory);

function post(message: PipeReaderMessage): void {
  parentPort?.postMessage(message);
}

try {
  for (let slot = 0; ; slot = (slot + 1) % states.length) {
    while (Atomics.load(states, slot) !== FREE) Atomics.wait(states, slot, FULL);
    const bytes = new Uint8Array(data, slot * slotBytes, slotBytes);
    let filled = 0;
    while (filled < slotBytes) {
      const got = readSync(fd, bytes, filled, slotBytes - filled, null);
      if (got === 0) break;
      filled += got;
    }
    if (filled > 0) {
      Atomics.store(states, slot, FULL);
      post({ slot, bytes: filled });
    }
    if (filled < slotBytes) break;
  }
  post({ end: true });
} catch (error) {
  post({
    error: {
      message: error instanceof Error ? error.message : String(error),
      code: (error as NodeJS.ErrnoException).code,
    },
  });
}
