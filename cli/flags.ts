/**
 * The flags of `sluice`, as data: how parseArgs reads each, which commands take it, what its value
 * must look like, and which flags exclude each other. cli/main.ts checks a command line against
 * these tables before any command's module loads, so a usage error costs no imports.
 */
import { parseArgs } from 'node:util';
import { BACKUP_COMPRESSIONS } from '../common/domain/backup-compression.js';
import { parseDriveSize } from '../common/domain/station.js';
import { CUSTOMISE_OPTIONS, customiseFlagsProblem } from './customise-flags.js';
import { parseSize } from './size-option.js';
import { parseCount, STATION_OPTIONS } from './station-flags.js';

/** parseArgs options for every flag of every command. */
export const OPTIONS = {
  json: { type: 'boolean', default: false },
  yes: { type: 'boolean', short: 'y', default: false },
  'no-verify': { type: 'boolean', default: false },
  'no-capacity-check': { type: 'boolean', default: false },
  'no-eject': { type: 'boolean', default: false },
  all: { type: 'boolean', default: false },
  virtual: { type: 'boolean', default: false },
  elevate: { type: 'string' },
  sha256: { type: 'string' },
  bmap: { type: 'string' },
  'no-bmap': { type: 'boolean', default: false },
  exact: { type: 'boolean', default: false },
  'allow-truncated': { type: 'boolean', default: false },
  'iso-mode': { type: 'string' },
  'builtin-decoders': { type: 'boolean', default: false },
  compress: { type: 'string' },
  label: { type: 'string' },
  'trim-to-partitions': { type: 'boolean', default: false },
  'all-blocks': { type: 'boolean', default: false },
  shrink: { type: 'boolean', default: false },
  repo: { type: 'string', multiple: true },
  'no-cache': { type: 'boolean', default: false },
  'cache-limit': { type: 'string' },
  device: { type: 'string' },
  customisation: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
  ...CUSTOMISE_OPTIONS,
  ...STATION_OPTIONS,
} as const;

/** Reads a command line; throws parseArgs's error for an unknown flag or a missing value. */
export function parseCommandLine(argv: readonly string[]) {
  return parseArgs({ args: [...argv], allowPositionals: true, options: OPTIONS });
}

/** The flags as parsed. */
export type Flags = ReturnType<typeof parseCommandLine>['values'];
export type FlagName = keyof typeof OPTIONS;

/**
 * Flags that only some commands take, and those commands ("os list" names a subcommand). A flag in
 * no row here goes with every command. `name` is how the usage error calls the row's flags when
 * listing them would not help.
 */
export const FLAG_SCOPES: readonly { flags: readonly FlagName[]; commands: readonly string[]; name?: string }[] = [
  { flags: ['exact'], commands: ['flash', 'verify', 'station'] },
  { flags: ['compress', 'trim-to-partitions', 'all-blocks', 'shrink'], commands: ['backup'] },
  { flags: ['iso-mode'], commands: ['flash', 'verify'] },
  { flags: ['allow-truncated'], commands: ['flash'] },
  { flags: ['label'], commands: ['erase'] },
  { flags: ['no-capacity-check'], commands: ['flash'] },
  {
    flags: Object.keys(CUSTOMISE_OPTIONS) as FlagName[],
    commands: ['flash', 'verify', 'station'],
    name: 'the customisation flags',
  },
  { flags: Object.keys(STATION_OPTIONS) as FlagName[], commands: ['station'] },
  { flags: ['repo'], commands: ['os', 'flash', 'verify', 'info'] },
  { flags: ['no-cache'], commands: ['flash', 'verify'] },
  { flags: ['cache-limit'], commands: ['flash', 'verify', 'station'] },
  { flags: ['customisation'], commands: ['verify'] },
  { flags: ['device'], commands: ['os list'] },
];

/** What a flag's value must be: the usage error for a value that is not, or null. */
export const VALUE_CHECKS: Partial<Record<FlagName, (value: string) => string | null>> = {
  sha256: (v) =>
    /^[0-9a-fA-F]{64}$/.test(v) ? null : `--sha256 takes the 64 hexadecimal digits of a SHA-256, not "${v}"`,
  elevate: (v) => (v === 'sudo' || v === 'pkexec' ? null : `--elevate takes sudo or pkexec, not "${v}"`),
  compress: (v) =>
    (BACKUP_COMPRESSIONS as readonly string[]).includes(v)
      ? null
      : `--compress takes ${BACKUP_COMPRESSIONS.join(', ')}, not "${v}"`,
  'iso-mode': (v) => (v === 'files' || v === 'image' ? null : `--iso-mode takes files or image, not "${v}"`),
  'cache-limit': (v) => (parseSize(v) !== null ? null : `--cache-limit takes a size such as 20G or 500M, not "${v}"`),
  'min-size': sizeCheck,
  'max-size': sizeCheck,
  count: (v) => (parseCount(v) !== null ? null : `--count takes a number of cards, not "${v}"`),
};

function sizeCheck(value: string): string | null {
  return parseDriveSize(value) !== null
    ? null
    : '--min-size and --max-size take a size such as 8GB, 30GiB or a number of bytes';
}

/** Flags that exclude or need each other: each rule returns its usage error, or null. */
const COMBINATIONS: readonly ((flags: Flags) => string | null)[] = [
  (f) => (f.bmap !== undefined && f['no-bmap'] ? '--bmap and --no-bmap exclude each other' : null),
  (f) => (f.exact && f.bmap !== undefined ? '--exact writes every byte: it excludes --bmap' : null),
  customiseFlagsProblem,
];

function given(value: unknown): boolean {
  return value !== undefined && value !== false;
}

/** "a", "a and b", "a, b and c". */
function listed(words: readonly string[]): string {
  return words.length < 2 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;
}

/**
 * The usage error for flags that `command` (with its first operand `sub`) does not take, or whose
 * values are wrong, or that do not go together; null when the flags are fine.
 */
export function flagsProblem(flags: Flags, command: string | undefined, sub: string | undefined): string | null {
  const names = [command ?? '', `${command} ${sub}`];
  for (const scope of FLAG_SCOPES) {
    if (scope.commands.some((c) => names.includes(c)) || !scope.flags.some((f) => given(flags[f]))) continue;
    const what = scope.name ?? listed(scope.flags.map((f) => `--${f}`));
    const plural = scope.name !== undefined || scope.flags.length > 1;
    return `${what} ${plural ? 'are options' : 'is an option'} of ${listed(scope.commands)}`;
  }
  for (const [flag, check] of Object.entries(VALUE_CHECKS)) {
    const value = flags[flag as FlagName];
    const problem = typeof value === 'string' ? check(value) : null;
    if (problem !== null) return problem;
  }
  for (const rule of COMBINATIONS) {
    const problem = rule(flags);
    if (problem !== null) return problem;
  }
  return null;
}
