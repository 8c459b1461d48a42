import type { SourceEnd } from '../common/domain/result.js';

/** The source side's verdict on the stream, as the helper receives it over its channel. */
export interface SourceEndSignal {
  /** The verdict, once it has arrived. */
  readonly current: SourceEnd | null;
  readonly settled: Promise<SourceEnd>;
}

/** A signal and the function that settles it (the first verdict counts). */
export function sourceEndSignal(): { signal: SourceEndSignal; settle(end: SourceEnd): void } {
  let current: SourceEnd | null = null;
  let resolve!: (end: SourceEnd) => void;
  const settled = new Promise<SourceEnd>((r) => (resolve = r));
  return {
    signal: {
      get current() {
        return current;
      },
      settled,
    },
    settle(end) {
      if (current !== null) return;
      current = end;
      resolve(end);
    },
  };
}

/** The verdict, or null when the job is cancelled first. */
export function waitForSourceEnd(signal: SourceEndSignal, abort: AbortSignal | undefined): Promise<SourceEnd | null> {
  if (signal.current !== null) return Promise.resolve(signal.current);
  if (abort === undefined) return signal.settled;
  if (abort.aborted) return Promise.resolve(null);
  return new Promise((resolve) => {
    const onAbort = () => resolve(null);
    abort.addEventListener('abort', onAbort, { once: true });
    void signal.settled.then((end) => {
      abort.removeEventListener('abort', onAbort);
      resolve(end);
    });
  });
}
