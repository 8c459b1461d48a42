import type { Writable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import { closeFd } from '../../../node/io.js';
import { processEntry } from '../../../node/process-entries.js';
import { MiB } from '../../../common/domain/units.js';
import { FREE, type PipeReaderData, type PipeReaderMessage } from './pipe-reader-slots.js';

/**
 * Bytes per slot, and slots: what a system tool has written is handed on a MiB at a time, and up
 * to four MiB wait for the sink while the tool goes on.
 */
const SLOT_BYTES = 1 * MiB;
const SLOTS = 4;

/**
 * Writes everything a tool writes into a kernel pipe (`fd`, the read end, which this takes over and
 * closes) to `sink`, a MiB at a time. The pipe is read on a thread of its own with blocking reads
 * (pipe-reader-thread.ts), into memory shared with this thread, so nothing is copied here.
 *
 * Why: xz writes 8 KiB at a time. Read as a stream, a child's stdout arrived in as many pieces
 * (70,000 reads of 9 KB on average for a 1 GiB image, counted with strace), and each piece cost
 * the decoder's main thread its stream bookkeeping, a look for free space and a write to the
 * helper; the helper in turn read the socket in as many small reads. Reading the pipe in large
 * pieces on this thread halves the CPU of the decoder process and of the helper for an .xz image.
 *
 * Resolves once the pipe has ended and the sink has taken every byte; rejects with the sink's
 * error or the read's. After a failure the thread still reads the pipe to its end (and drops what
 * it reads), so that the tool is never left blocked on a full pipe: the caller stops the tool.
 */
export function drainPipe(fd: number, sink: Writable): Promise<void> {
  const states = new Int32Array(new SharedArrayBuffer(SLOTS * Int32Array.BYTES_PER_ELEMENT));
  const data = new SharedArrayBuffer(SLOTS * SLOT_BYTES);
  const workerData: PipeReaderData = { fd, states: states.buffer as SharedArrayBuffer, data, slotBytes: SLOT_BYTES };
  const worker = new Worker(processEntry('pipe-reader-thread'), { workerData });
  const release = (slot: number) => {
    Atomics.store(states, slot, FREE);
    Atomics.notify(states, slot);
  };
  return new Promise<void>((resolve, reject) => {
    let writing = 0;
    let ended = false;
    let failure: Error | null = null;
    const fail = (error: Error) => {
      if (failure !== null) return;
      failure = error;
      for (let slot = 0; slot < SLOTS; slot++) release(slot);
      reject(error);
    };
    // The sink's error also reaches the write's callback; this only keeps it from being unhandled.
    const onSinkError = (error: Error) => fail(error);
    sink.on('error', onSinkError);
    const settleIfDone = () => {
      if (!ended || writing > 0 || failure !== null) return;
      sink.off('error', onSinkError);
      resolve();
    };
    worker.on('message', (message: PipeReaderMessage) => {
      if ('slot' in message) {
        const { slot, bytes } = message;
        if (failure !== null) return release(slot);
        writing += 1;
        sink.write(Buffer.from(data, slot * SLOT_BYTES, bytes), (error) => {
          writing -= 1;
          if (error) return fail(error);
          release(slot);
          settleIfDone();
        });
      } else if ('end' in message) {
        ended = true;
        settleIfDone();
      } else {
        fail(Object.assign(new Error(message.error.message), { code: message.error.code }));
      }
    });
    worker.on('error', fail);
    worker.on('exit', () => {
      void closeFd(fd).catch(() => undefined);
      if (!ended) fail(new Error('the thread reading the decoder tool stopped'));
    });
  });
}
