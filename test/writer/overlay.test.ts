import { describe, expect, it } from 'vitest';
import { applyOverlay, customiseTargets, OverlayInbox, outsideImage } from '../../writer/overlay.js';
import { jobError } from '../../common/domain/failure.js';
import type { WriteTarget } from '../../writer/write-target.js';

describe('overlay messages, as the helper gathers them', () => {
  it('completes once every announced byte has arrived, per target, in the order sent', async () => {
    const inbox = new OverlayInbox([5, 2]);
    let done = false;
    void inbox.complete.then(() => (done = true));
    expect(inbox.add(0, 100, Buffer.from('abc'))).toBeNull();
    expect(inbox.add(1, 7, Buffer.from('xy'))).toBeNull();
    await Promise.resolve();
    expect(done).toBe(false);
    expect(inbox.add(0, 50, Buffer.from('de'))).toBeNull();
    expect(await inbox.complete).toEqual([
      [
        { offset: 100, bytes: Buffer.from('abc') },
        { offset: 50, bytes: Buffer.from('de') },
      ],
      [{ offset: 7, bytes: Buffer.from('xy') }],
    ]);
  });

  it('a job without customisation is complete at once', async () => {
    expect(await new OverlayInbox([]).complete).toEqual([]);
    expect(await new OverlayInbox([0]).complete).toEqual([[]]);
  });

  it('refuses more bytes than announced, a target the job lacks, and overlapping bytes', () => {
    const inbox = new OverlayInbox([4]);
    expect(inbox.add(1, 0, Buffer.from('a'))).toMatch(/target 1, which the job does not have/);
    expect(inbox.add(0, 0, Buffer.from('abcde'))).toMatch(/more overlay bytes for target 0 than the 4 announced/);
    expect(inbox.add(0, 10, Buffer.from('ab'))).toBeNull();
    expect(inbox.add(0, 11, Buffer.from('c'))).toMatch(/overlapping overlay bytes at offset 11/);
    expect(inbox.add(0, 9, Buffer.from('cd'))).toMatch(/overlapping/);
    expect(inbox.add(0, 12, Buffer.from('cd'))).toBeNull();
  });

  it('lays the bytes over a view of the image, wherever the view cuts them', () => {
    const view = Buffer.from('0123456789');
    applyOverlay(view, 100, [
      { offset: 98, bytes: Buffer.from('ABCD') },
      { offset: 108, bytes: Buffer.from('XYZ') },
      { offset: 200, bytes: Buffer.from('Q') },
    ]);
    expect(view.toString()).toBe('CD234567XY');
    expect(outsideImage([{ offset: 8, bytes: Buffer.from('ab') }], 10)).toBeNull();
    expect(outsideImage([{ offset: 9, bytes: Buffer.from('ab') }], 10)).toBe(9);
  });
});

describe('a customisation the helper was stopped before', () => {
  const ok = { status: 'ok' as const, target: '/dev/sdx', bytes: 4096, written: true, verified: true, seconds: 1 };
  const target = { path: '/dev/sdx' } as unknown as WriteTarget;
  const never = new Promise<never>(() => undefined);

  it("is a failure with the refusal's reason when the helper refused its instructions, a cancel otherwise", async () => {
    const refused = new AbortController();
    refused.abort(
      jobError('protocol-error', 'The helper refused its instructions: overlapping overlay bytes at offset 4096'),
    );
    const results = new Map([[target.path, { ...ok }]]);
    await customiseTargets([target], results, never, Buffer.alloc(0), 4096, refused.signal);
    expect(results.get(target.path)).toMatchObject({
      status: 'failed',
      code: 'protocol-error',
      message: expect.stringContaining('overlapping'),
    });

    const cancelled = new AbortController();
    cancelled.abort();
    const asked = new Map([[target.path, { ...ok }]]);
    await customiseTargets([target], asked, never, Buffer.alloc(0), 4096, cancelled.signal);
    expect(asked.get(target.path)).toEqual({ status: 'cancelled', target: target.path, bytes: 4096 });
  });
});
