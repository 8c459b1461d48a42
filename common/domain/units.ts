/** Byte-size constants, so that sizes in the code read with their unit. */
export const KiB = 1024;
export const MiB = 1024 * KiB;
export const GiB = 1024 * MiB;

const UNITS = ['B', 'KB', 'MB', 'GB', 'TB'] as const;

/**
 * Formats a byte count the way drive vendors label their products (powers of 1000),
 * so that "32 GB" on screen matches "32 GB" printed on the card.
 */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000;
    unit += 1;
  }
  const digits = unit === 0 || value >= 100 ? 0 : 1;
  return `${value.toFixed(digits)} ${UNITS[unit]}`;
}

/** Formats a duration in seconds as "1 h 02 min", "3 min 05 s", "42 s", "0.4 s" or "40 ms". */
export function formatDuration(seconds: number): string {
  // A fast flash takes under a second; "0 s" would read as "nothing happened", and so would
  // "0.0 s" beside a speed worked out from the real duration: under 0.1 s counts milliseconds.
  if (seconds < 0.0005) return 'under 1 ms';
  if (seconds < 0.095) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 9.95) return `${seconds.toFixed(1)} s`;
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}
