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

/** `cmdline` with `args` at the end of its first line, each replacing an argument of the same name. */
export function withArguments(cmdline: string, args: readonly string[]): string {
  const end = cmdline.search(/\r?\n/);
  const line = end < 0 ? cmdline : cmdline.slice(0, end);
  const rest = end < 0 ? '' : cmdline.slice(end);
  const replaced = new Set(args.map(keyOf));
  const kept = line.split(/[ \t]+/).filter((arg) => arg !== '' && !replaced.has(keyOf(arg)));
  return `${[...kept, ...args].join(' ')}${rest}`;
}
