import { AUTHORIZATION_CANCELLED, lastLine, type Elevation } from './types.js';

/** pkexec's own exit statuses (pkexec(1)); the helper never uses them. */
const PKEXEC_DISMISSED = 126;
const PKEXEC_NOT_AUTHORIZED = 127;

/**
 * pkexec with the polkit action in build/polkit/, whose message names the drive through the
 * helper's command line. pkexec becomes the helper (it execs it), keeps stdin, closes every other
 * descriptor and clears the environment.
 */
export const pkexecLaunch: Elevation = {
  name: 'pkexec',
  channel: 'fifo',
  passesStdin: true,
  command: (program, args) => {
    // The polkit action matches the program by its absolute path; a relative one would be looked up on PATH.
    if (!program.startsWith('/')) throw new Error(`pkexec needs an absolute program path, not ${program}`);
    return { file: 'pkexec', args: [program, ...args] };
  },
  denial: (exit) => {
    if (exit.code === PKEXEC_DISMISSED) return AUTHORIZATION_CANCELLED;
    if (exit.code !== PKEXEC_NOT_AUTHORIZED) return null;
    const reason = lastLine(exit.stderr.replace(/This incident has been reported\.?/g, ''));
    // 127 is also "the program could not be run"; only polkit's refusals are denials.
    return /not authorized|authentication agent|authority/i.test(reason)
      ? `authorization was refused (${reason})`
      : null;
  },
};
