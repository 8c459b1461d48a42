import type { Progress } from '../common/domain/progress.js';
import { PHASE_LABEL } from '../common/app/phase-label.js';
import { repairWords, type BackupFigures, type TargetResult } from '../common/domain/result.js';
import { formatBytes, formatDuration } from '../common/domain/units.js';
import type { ImageInfo } from '../common/domain/image.js';
import { skippedLines } from '../common/app/skipped-words.js';
import { BACKUP_CHECKED, backupFiguresText, backupProgressWords } from '../common/app/backup-words.js';
import { limitWords } from '../common/app/bottleneck.js';
import type { PreparedCustomisation } from '../common/domain/customisation.js';
import { cancelledWords, type CancelledJob } from '../common/app/cancel-words.js';

const BAR_WIDTH = 30;

/**
 * One line of a terminal progress bar: "Writing   [#######.......]  45%  123 MB/s  ETA 12 s  limited by the drive";
 * a backup's has a second, which says what its bytes are counted against.
 */
export function progressLine(p: Progress): string {
  const bar = barLine(p);
  const words = p.backup === undefined ? null : backupProgressWords(p, p.backup);
  return words === null ? bar : `${bar}\n  ${words}`;
}

function barLine(p: Progress): string {
  const fraction = p.bytesTotal ? Math.min(1, p.bytesDone / p.bytesTotal) : null;
  const filled = fraction === null ? 0 : Math.round(fraction * BAR_WIDTH);
  const bar = fraction === null ? ''.padEnd(BAR_WIDTH, '?') : '#'.repeat(filled) + '.'.repeat(BAR_WIDTH - filled);
  const percent = fraction === null ? formatBytes(p.bytesDone) : `${Math.floor(fraction * 100)}%`;
  const speed = p.speed > 0 ? `${formatBytes(p.speed)}/s` : '';
  const eta = p.eta === null ? '' : `ETA ${formatDuration(p.eta)}`;
  const limit = limitWords(p) ?? '';
  return `${PHASE_LABEL[p.phase].padEnd(13)} [${bar}] ${percent.padStart(4)}  ${speed.padStart(10)}  ${limit === '' ? eta : `${eta.padEnd(Math.max(14, eta.length + 2))}${limit}`}`.trimEnd();
}

/** The sentence that ends a job of `kind` for one target, with what it left out and why. */
export function resultLine(r: TargetResult, kind: CancelledJob = 'flash'): string {
  switch (r.status) {
    case 'ok': {
      const speed = r.seconds > 0 ? `, ${formatBytes(r.bytes / r.seconds)}/s` : '';
      const left = skippedLines(r.skipped, r.skippedFor ?? [], r.written ? 'written' : 'compared')
        .map((line) => ` ${line}`)
        .join('');
      if (r.backup !== undefined) return backupResultLine(r, r.backup, left);
      if (!r.written)
        return `${r.target}: verified, ${formatBytes(r.bytes)} match the image (${formatDuration(r.seconds)}).${left}`;
      const how = `${r.verified ? 'written and verified' : 'written, NOT verified (verification was turned off)'}${r.customised === true ? ', customised' : ''}`;
      const ejected = r.ejected === true ? ' Ejected: you can remove it now.' : '';
      const warnings = (r.warnings ?? []).map((w) => `\n  warning: ${w}`).join('');
      const repaired =
        r.repaired === undefined
          ? ''
          : ` Verification found blocks that differed: ${repairWords(r.repaired)} (written again and read back right).`;
      const capacity =
        r.capacityCheck === undefined
          ? ''
          : `\n  capacity checked: ${r.capacityCheck.markers} markers past the image came back (${formatDuration(r.capacityCheck.seconds)}).`;
      return `${r.target}: ${how}, ${formatBytes(r.bytes)} in ${formatDuration(r.seconds)}${speed}.${left}${repaired}${ejected}${capacity}${warnings}`;
    }
    case 'cancelled':
      return `${r.target}: cancelled. ${cancelledWords(kind)}`;
    case 'failed':
      // Most messages name the device already; those about the image do not.
      return r.message.includes(r.target) ? r.message : `${r.target}: ${r.message}`;
  }
}

/** A saved backup: whether it was read back, what was read of the drive, and what the file takes. */
function backupResultLine(r: Extract<TargetResult, { status: 'ok' }>, figures: BackupFigures, left: string): string {
  const warnings = (r.warnings ?? []).map((w) => `\n  warning: ${w}`).join('');
  const how = r.verified
    ? `saved and verified: ${BACKUP_CHECKED}`
    : 'saved, NOT verified: verification was turned off, so the file was not read back';
  return `${r.target}: ${how} (${formatDuration(r.seconds)}). ${backupFiguresText(figures, r.bytes)}${left}${warnings}`;
}

/** The image's size as far as it is known: "1.1 GB", "at least 1.1 GB" (gzip) or that it shows only once decoded. */
export function describeSize(info: ImageInfo): string {
  if (info.size === null) return 'size known only once decoded';
  return `${info.sizeExact ? '' : 'at least '}${formatBytes(info.size)}`;
}

/** The line that says what is being written and how it is read: "image.img.xz: xz, 1.1 GB, decoded by xz -dc -T2 (system)". */
export function sourceLine(info: ImageInfo, decoder: string): string {
  const entry = info.entry === null ? '' : `, entry ${info.entry.choice ?? info.entry.name}`;
  const bmap =
    info.blockMap === null
      ? ''
      : `, block map from ${info.blockMap.from} (${formatBytes(info.blockMap.mappedBytes)} mapped)`;
  const checksum = info.checksum === null ? '' : `, SHA-256 from ${info.checksum.from}`;
  return `${info.name}: ${info.format}, ${describeSize(info)}${entry}${bmap}${checksum}; ${decoder}`;
}

/** What customisation writes: "customised for systemd-firstrun: firstrun.sh (2.1 KB), cmdline.txt (168 B)". */
export function customisationLine(c: PreparedCustomisation): string {
  const files = (c.files[0] ?? []).map((f) => `${f.name} (${formatBytes(f.size)})`).join(', ');
  return `customised for ${c.method}: ${files}${c.files.length > 1 ? ', on each card its own' : ''}`;
}
