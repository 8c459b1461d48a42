import { AUTHORIZATION_CANCELLED, lastLine, type Elevation } from './types.js';

/** Quotes one argument for /bin/sh: single quotes, with each ' written as '\''. */
export function shellQuote(arg: string): string {
  return `'${arg.replaceAll("'", `'\\''`)}'`;
}

/** An AppleScript string literal. */
export function appleScriptString(text: string): string {
  return `"${text.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}

/**
 * macOS: the system's own authorization dialog through `do shell script … with administrator
 * privileges`, with our sentence in it (`with prompt`), never a password field of our own.
 * It passes no descriptors at all, so both the channel and the image go through FIFOs.
 */
export const osascriptLaunch: Elevation = {
  name: 'osascript',
  channel: 'fifo',
  passesStdin: false,
  command: (program, args, request) => {
    const exec = `exec ${[program, ...args].map(shellQuote).join(' ')}`;
    const shell = request.precondition === undefined ? exec : `${request.precondition} && ${exec}`;
    const prompt = `Sluice needs administrator rights to ${request.reason}.`;
    return {
      file: '/usr/bin/osascript',
      args: [
        '-e',
        `do shell script ${appleScriptString(shell)} with prompt ${appleScriptString(prompt)} with administrator privileges`,
      ],
    };
  },
  // "User canceled. (-128)" when the dialog is dismissed; Authorization Services' own refusals
  // are -60005 (denied) and -60006/-60007 (cancelled, not allowed).
  denial: (exit) => {
    if (/\(-128\)|\(-60006\)/.test(exit.stderr)) return AUTHORIZATION_CANCELLED;
    if (/\(-6000[57]\)/.test(exit.stderr)) return `authorization was refused (${lastLine(exit.stderr)})`;
    return null;
  },
};
