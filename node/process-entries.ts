/**
 * The programs Sluice starts as processes (and its one worker thread), as the build bundles them:
 * one entry file each in out/run/ (build/scripts/bundle-processes.ts), with the chunks they import
 * beside them.
 *
 * Why bundles: Node resolves, reads and links every module of a program before it runs a line, and
 * a flash starts four programs, one after another on its critical path. One file instead of dozens
 * saves each of them about a third of the time Node spends loading it.
 */
import { fileURLToPath } from 'node:url';

/** What the build bundles, by the name of its file in out/run/. */
export const PROCESS_ENTRIES = {
  /** The `sluice` command (cli/sluice.ts). */
  sluice: 'cli/sluice.js',
  /** The privileged helper (privileged/main.ts): what root runs. */
  helper: 'privileged/main.js',
  /** The image probe (user/images/probe/main.ts). */
  probe: 'user/images/probe/main.js',
  /** The decoder (user/images/decode/main.ts). */
  decoder: 'user/images/decode/main.js',
  /** The drive map reader, for backups of the used blocks (user/backup/drive-map/main.ts). */
  'drive-map': 'user/backup/drive-map/main.js',
  /** The shrinker, for `--shrink` backups (user/backup/shrink-process/main.ts). */
  shrink: 'user/backup/shrink-process/main.js',
  /** The installer stick builder, for the app (user/installer/process/main.ts). */
  installer: 'user/installer/process/main.js',
  /** The catalogue reader (user/catalogue/process/main.ts). */
  catalogue: 'user/catalogue/process/main.js',
  /** The decoder pipe's reading thread (user/images/decode/pipe-reader-thread.ts). */
  'pipe-reader-thread': 'user/images/decode/pipe-reader-thread.js',
} as const;

export type ProcessName = keyof typeof PROCESS_ENTRIES;

/**
 * The bundle of `name`. Found from this module's own place, which is one directory below out/
 * either way: out/node/ as tsc built it, out/run/ once bundled into one of the programs.
 */
export function processEntry(name: ProcessName): string {
  return fileURLToPath(new URL(`../run/${name}.js`, import.meta.url));
}
