import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { MAX_PENDING_READS, ReadRequests } from '../../writer/read-requests.js';

describe('the read messages the helper holds', () => {
  it('hands batches over in order, waiting for the next, and ends after the last', async () => {
    const requests = new ReadRequests();
    const signal = new AbortController().signal;
    const first = requests.next(signal);
    expect(requests.deliver([[0, 4096]], false)).toBeNull();
    expect(await first).toEqual([[0, 4096]]);
    expect(requests.deliver([[8192, 512]], true)).toBeNull();
    expect(await requests.next(signal)).toEqual([[8192, 512]]);
    expect(await requests.next(signal)).toBeNull();
    expect(requests.deliver([[0, 1]], false)).toBe('a read message after the last one');
  });

  it('refuses more than it holds', () => {
    const requests = new ReadRequests();
    for (let i = 0; i < MAX_PENDING_READS; i++) expect(requests.deliver([[i, 1]], false)).toBeNull();
    expect(requests.deliver([[0, 1]], false)).toBe(`more than ${MAX_PENDING_READS} read messages waiting`);
  });

  it('leaves no listener on the signal after each wait, and stops waiting when it aborts', async () => {
    const requests = new ReadRequests();
    const controller = new AbortController();
    for (let i = 0; i < 100; i++) {
      const next = requests.next(controller.signal);
      requests.deliver([[i, 1]], false);
      await next;
    }
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    const waiting = requests.next(controller.signal);
    controller.abort();
    expect(await waiting).toBeNull();
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});
