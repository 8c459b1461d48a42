import type { Phase } from '../domain/progress.js';

/** What a job is doing, in one word, as the terminal's progress line and the app's progress screen say it. */
export const PHASE_LABEL: Readonly<Record<Phase, string>> = {
  downloading: 'Downloading',
  decompressing: 'Decompressing',
  reading: 'Reading',
  writing: 'Writing',
  syncing: 'Syncing',
  verifying: 'Verifying',
  repairing: 'Repairing',
};
