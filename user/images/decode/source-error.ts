import type { SourceFailureCode } from '../../../common/contracts/decoder-protocol.js';

/** Why the source could not be turned into image bytes: thrown inside the decoder, sent to the parent. */
export class SourceError extends Error {
  constructor(
    readonly code: SourceFailureCode,
    message: string,
    /** Byte offset in the decoded image where the problem is, when known (the message names source offsets). */
    readonly offset?: number | undefined,
  ) {
    super(message);
    this.name = 'SourceError';
  }
}
