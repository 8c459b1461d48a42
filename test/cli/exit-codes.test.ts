import { describe, expect, it } from 'vitest';
import type { TargetResult } from '../../common/domain/result.js';
import { EXIT, exitCodeFor } from '../../cli/exit-codes.js';

const ok: TargetResult = { status: 'ok', target: 'a', bytes: 1, written: true, verified: true, seconds: 1 };
const refused: TargetResult = { status: 'failed', target: 'b', bytes: 0, code: 'target-too-small', message: '' };
const failed: TargetResult = { status: 'failed', target: 'c', bytes: 9, code: 'write-error', message: '' };
const cancelled: TargetResult = { status: 'cancelled', target: 'd', bytes: 5 };

describe('exitCodeFor: the worst outcome wins', () => {
  it.each<[TargetResult[], number]>([
    [[ok], EXIT.ok],
    [[ok, ok], EXIT.ok],
    [[refused], EXIT.refused],
    [[ok, refused], EXIT.refused],
    [[ok, failed], EXIT.failed],
    [[refused, failed], EXIT.failed],
    [[failed, cancelled], EXIT.cancelled],
    [[{ ...failed, code: 'unsupported-format' }], EXIT.unsupportedFormat],
    [[], EXIT.failed],
  ])('%j → %i', (results, code) => {
    expect(exitCodeFor(results)).toBe(code);
  });
});
