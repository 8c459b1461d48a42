/**
 * What Sluice does with drives. One word for each, used the same way in the helper's protocol
 * (common/contracts/helper-protocol.ts), the app's IPC and state, and the CLI's commands:
 * - flash: an image written to drives, then read back;
 * - clone: a whole drive written to another, then read back;
 * - backup: a whole drive saved into a file, then the file read back;
 * - verify: a drive compared with an image, nothing written;
 * - check: a drive checked for fake capacity, every block it writes put back.
 */
export const JOB_KINDS = ['flash', 'clone', 'backup', 'verify', 'check'] as const;

export type JobKind = (typeof JOB_KINDS)[number];
