/**
 * The helper compares the medium twice: before it opens a drive (nothing unmounted yet) and again
 * on the open drive, so that a card swapped between its look and the open is refused too, and the
 * drive it had opened is closed again. A platform whose medium changes between the two answers
 * stands in for the swap, which no real drive can be made to do at that moment.
 */
import { fstatSync, openSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openSameMedium, READS, WRITES } from '../../writer/medium-check.js';
import type { DeviceFacts, DevicePlatform } from '../../writer/platform/types.js';

function platformAnswering(...media: (string | null)[]): DevicePlatform {
  const answers = [...media];
  return { medium: () => Promise.resolve(answers.shift() ?? null) } as unknown as DevicePlatform;
}

const facts = { path: '/dev/sdz' } as DeviceFacts;

function openNull() {
  const opened = { fd: openSync('/dev/null', 'r'), released: false };
  return { opened, drive: { fd: opened.fd, hold: { release: () => Promise.resolve(void (opened.released = true)) } } };
}

describe('openSameMedium', () => {
  it('opens a drive that holds the chosen medium at both looks', async () => {
    const { drive } = openNull();
    await expect(
      openSameMedium(facts, platformAnswering('7', '7'), '7', WRITES, () => Promise.resolve(drive)),
    ).resolves.toBe(drive);
  });

  it('refuses a card swapped between the look and the open, and closes and releases what it opened', async () => {
    const { opened, drive } = openNull();
    const refusal = openSameMedium(facts, platformAnswering('7', '8'), '7', WRITES, () => Promise.resolve(drive));
    await expect(refusal).rejects.toMatchObject({
      failure: {
        code: 'target-not-found',
        message:
          '/dev/sdz holds another medium than the one chosen (a card swapped in the same reader?). Nothing was written to it; choose the drive again.',
      },
    });
    expect(() => fstatSync(opened.fd)).toThrow(/EBADF/);
    expect(opened.released).toBe(true);
  });

  it('refuses before opening a drive that holds another medium, or none, saying which', async () => {
    let opens = 0;
    const open = () => Promise.resolve(((opens += 1), openNull().drive));
    await expect(openSameMedium(facts, platformAnswering('8'), '7', READS, open)).rejects.toMatchObject({
      failure: {
        code: 'source-read-error',
        message: expect.stringContaining('holds another medium than the one chosen') as unknown,
      },
    });
    await expect(openSameMedium(facts, platformAnswering(null), '7', READS, open)).rejects.toMatchObject({
      failure: {
        code: 'source-read-error',
        message:
          '/dev/sdz holds no medium now (was the card taken out?). Nothing was read from it; choose the drive again.',
      },
    });
    expect(opens).toBe(0);
  });

  it('compares nothing where the OS numbers no media', async () => {
    const { drive } = openNull();
    await expect(
      openSameMedium(facts, platformAnswering('1', '2'), null, WRITES, () => Promise.resolve(drive)),
    ).resolves.toBe(drive);
  });
});
