import type { Elevation } from './types.js';

/** Already root (or an administrator on Windows): the helper is a plain child with an inherited channel. */
export const directLaunch: Elevation = {
  name: 'direct',
  channel: 'inherited',
  passesStdin: true,
  command: (program, args) => ({ file: program, args: [...args] }),
  denial: () => null,
};
