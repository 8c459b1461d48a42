/**
 * The flags only `sluice station` takes, and how their values read. Light on purpose:
 * cli/main.ts loads it for every command.
 */

/** parseArgs options of the station. */
export const STATION_OPTIONS = {
  slots: { type: 'string', multiple: true },
  'min-size': { type: 'string' },
  'max-size': { type: 'string' },
  log: { type: 'string' },
  count: { type: 'string' },
  keep: { type: 'boolean', default: false },
} as const;

/** --count N: a whole number of cards, at least 1. */
export function parseCount(text: string): number | null {
  return /^\d{1,6}$/.test(text) && Number(text) > 0 ? Number(text) : null;
}
