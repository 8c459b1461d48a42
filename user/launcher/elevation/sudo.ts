import { lastLine, type Elevation } from './types.js';

/**
 * sudo, for the command line in a terminal (and for scripts with a NOPASSWD rule). It keeps the
 * caller's stdin, so the image file or the decoder's pipe is the helper's fd 0 as is; it closes
 * every other descriptor, so the channel goes through FIFOs.
 */
export const sudoLaunch: Elevation = {
  name: 'sudo',
  channel: 'fifo',
  passesStdin: true,
  command: (program, args, request) => ({
    file: 'sudo',
    args: [
      // Without a terminal nobody could type a password: fail at once instead of waiting.
      ...(request.interactive ? [] : ['-n']),
      // sudo expands %-escapes in its prompt; a drive name must not.
      '-p',
      `[sudo] password for %p to ${request.reason.replaceAll('%', '%%')}: `,
      '--',
      program,
      ...args,
    ],
  }),
  // sudo exits 1 for its own failures, before the helper runs (the helper never exits 1). Its
  // reasons: "a password is required", "3 incorrect password attempts", "user is not in the
  // sudoers file", "Sorry, user … is not allowed to execute …".
  denial: (exit) => {
    if (exit.code !== 1) return null;
    const reason = lastLine(exit.stderr);
    return /password|sudoers|not allowed|authenticat/i.test(reason) ? `authorization was refused (${reason})` : null;
  },
};
