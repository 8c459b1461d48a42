/**
 * The flags only `sluice station` takes (issue 19), and how their values read. Light on purpose:
 * cli/main.ts loads it for every command.
 */

/** parseArgs options of the station. */
export const STATION_OPTIONS = {
  slots: { type: 'string', multiple: true },
  'min-size': { type: 'string' },
  'max-size': { type: 'string' },
  log: { type: 'string' },
  count: { type: 'string' },
} as const;

const SIZE_UNITS: Record<string, number> = { '': 1, b: 1, k: 1e3, kb: 1e3, m: 1e6, mb: 1e6, g: 1e9, gb: 1e9, t: 1e12, tb: 1e12, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30, tib: 2 ** 40 };

/** A size such as 8GB, 64 GB, 7.5G or 30GiB (G and GB are 10^9, as on the card's label), or a byte count. */
export function parseSize(text: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  const unit = SIZE_UNITS[(match?.[2] ?? '').toLowerCase()];
  if (match === null || unit === undefined) return null;
  const bytes = Math.round(Number(match[1]) * unit);
  return Number.isSafeInteger(bytes) ? bytes : null;
}

/** --count N: a whole number of cards, at least 1. */
export function parseCount(text: string): number | null {
  return /^\d{1,6}$/.test(text) && Number(text) > 0 ? Number(text) : null;
}
