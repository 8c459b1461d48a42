import * as v from 'valibot';
import { expect, it } from 'vitest';
import { failedReply, FailureSchema, JobError } from '../../../common/domain/failure.js';

it('a child process’s failed reply becomes the JobError of its whole failure, without the reply’s tag', () => {
  const error = failedReply({
    type: 'failed',
    code: 'verify-mismatch',
    message: 'Block 1 differs.',
    offset: 4096,
    badBlocks: 2,
  });
  expect(error).toBeInstanceOf(JobError);
  expect(error.message).toBe('Block 1 differs.');
  expect(error.failure).toEqual({ code: 'verify-mismatch', message: 'Block 1 differs.', offset: 4096, badBlocks: 2 });
  // A result carries the failure as it is: a leftover tag would fail its strict schema.
  expect(v.is(FailureSchema, error.failure)).toBe(true);
});
