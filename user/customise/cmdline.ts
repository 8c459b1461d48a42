/**
 * The kernel command line of a Raspberry Pi image (cmdline.txt on the boot partition): one line,
 * which the firmware reads up to its first line break. Arguments are added to that line; anything
 * after it, such as the final line break, stays as it was.
 */

/** The name of an argument: what comes before its "=" (systemd.run=...), or all of it (quiet). */
function keyOf(argument: string): string {
  const at = argument.indexOf('=');
  return at < 0 ? argument : argument.slice(0, at);
}

/** The arguments of the command line's first line, the one the firmware reads. */
function argumentsOf(cmdline: string): string[] {
  const end = cmdline.search(/\r?\n/);
  // A double-quoted part (systemd.run="/bin/sh -c '...'") is one argument with its spaces, as the kernel reads it.
  return (end < 0 ? cmdline : cmdline.slice(0, end)).match(/(?:[^\s"]+|"[^"]*"?)+/g) ?? [];
}

/**
 * Why `bytes`, a cmdline.txt as read from an image, is not a kernel command line, or null when it
 * is one: UTF-8 text without control characters (a NUL in it means the read went wrong), whose
 * first line has arguments.
 */
export function cmdlineProblem(bytes: Buffer): string | null {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return 'it is not UTF-8 text';
  }
  const control = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.exec(text);
  if (control !== null)
    return `it holds a control character (0x${control[0].charCodeAt(0).toString(16).padStart(2, '0')}) at byte ${Buffer.byteLength(text.slice(0, control.index))}`;
  if (argumentsOf(text).length === 0) return 'its first line is empty';
  return null;
}

/** `cmdline` with `args` at the end of its first line, each replacing an argument of the same name. */
export function withArguments(cmdline: string, args: readonly string[]): string {
  const end = cmdline.search(/\r?\n/);
  const rest = end < 0 ? '' : cmdline.slice(end);
  const replaced = new Set(args.map(keyOf));
  const kept = argumentsOf(cmdline).filter((arg) => !replaced.has(keyOf(arg)));
  return `${[...kept, ...args].join(' ')}${rest}`;
}
