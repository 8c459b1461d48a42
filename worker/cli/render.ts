import type { Phase, Progress } from '../common/progress.js';
import type { TargetResult } from '../common/result.js';
import { formatBytes, formatDuration } from '../common/units.js';

const PHASE_LABEL: Record<Phase, string> = {
  decompressing: 'Decompressing',
  writing: 'Writing',
  syncing: 'Syncing',
  verifying: 'Verifying',
};

const BAR_WIDTH = 30;

/** One line of a terminal progress bar: "Writing   [#######.......]  45%  123 MB/s  ETA 12 s". */
export function progressLine(p: Progress): string {
  const fraction = p.bytesTotal ? Math.min(1, p.bytesDone / p.bytesTotal) : null;
  const filled = fraction === null ? 0 : Math.round(fraction * BAR_WIDTH);
  const bar = fraction === null ? ''.padEnd(BAR_WIDTH, '?') : '#'.repeat(filled) + '.'.repeat(BAR_WIDTH - filled);
  const percent = fraction === null ? formatBytes(p.bytesDone) : `${Math.floor(fraction * 100)}%`;
  const speed = p.speed > 0 ? `${formatBytes(p.speed)}/s` : '';
  const eta = p.eta === null ? '' : `ETA ${formatDuration(p.eta)}`;
  return `${PHASE_LABEL[p.phase].padEnd(13)} [${bar}] ${percent.padStart(4)}  ${speed.padStart(10)}  ${eta}`.trimEnd();
}

/** The sentence that ends a job for one target. */
export function resultLine(r: TargetResult): string {
  switch (r.status) {
    case 'ok': {
      const speed = r.seconds > 0 ? `, ${formatBytes(r.bytes / r.seconds)}/s` : '';
      if (!r.written) return `${r.target}: verified, ${formatBytes(r.bytes)} match the image (${formatDuration(r.seconds)}).`;
      const how = r.verified ? 'written and verified' : 'written, NOT verified (verification was turned off)';
      const ejected = r.ejected === true ? ' Ejected: you can remove it now.' : '';
      const warnings = (r.warnings ?? []).map((w) => `\n  warning: ${w}`).join('');
      return `${r.target}: ${how}, ${formatBytes(r.bytes)} in ${formatDuration(r.seconds)}${speed}.${ejected}${warnings}`;
    }
    case 'cancelled':
      return `${r.target}: cancelled. The device is now incomplete; flash it again before using it.`;
    case 'failed':
      // Most messages name the device already; those about the image do not.
      return r.message.includes(r.target) ? r.message : `${r.target}: ${r.message}`;
  }
}
