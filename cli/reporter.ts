import type { Progress } from '../common/domain/progress.js';
import type { TargetResult } from '../common/domain/result.js';
import type { ImageInfo } from '../common/domain/image.js';
import type { PreparedCustomisation } from '../common/domain/customisation.js';
import { customisationLine, progressLine, resultLine, sourceLine } from './render.js';
import { exitCodeFor } from './exit-codes.js';
import { loggedPhase } from '../common/app/bottleneck.js';
import type { CancelledJob } from '../common/app/cancel-words.js';

/** Where a CLI job's events go: a live terminal display, JSON lines, or plain lines for logs. */
export interface Reporter {
  /** What is being written, and which decoder reads it. */
  source(info: ImageInfo, decoder: string): void;
  /** What customisation writes onto each card (the settings' files, never a secret). */
  customisation(c: PreparedCustomisation): void;
  progress(progress: Progress): void;
  result(result: TargetResult): void;
  /** Something to know that is not progress nor a result (a dropped download resumed). */
  notice(message: string): void;
  /** Ends the live display, if any, before other output follows. */
  end(): void;
}

/** JSON lines on stdout, one object per event: for scripts and for the app's own tests. */
function jsonReporter(): Reporter {
  return {
    source: (info, decoder) => process.stdout.write(`${JSON.stringify({ type: 'source', ...info, decoder })}\n`),
    customisation: (c) =>
      process.stdout.write(
        `${JSON.stringify({ type: 'customisation', method: c.method, why: c.why, files: c.files })}\n`,
      ),
    progress: (p) => process.stdout.write(`${JSON.stringify({ type: 'progress', ...p })}\n`),
    result: (r) => process.stdout.write(`${JSON.stringify({ type: 'result', ...r })}\n`),
    notice: (message) => process.stdout.write(`${JSON.stringify({ type: 'notice', message })}\n`),
    end: () => undefined,
  };
}

/** A redrawn block of progress bars on stderr, one per target. */
function terminalReporter(kind: CancelledJob): Reporter {
  const lines = new Map<string, string>();
  let drawn = 0;
  const draw = () => {
    const up = drawn > 0 ? `\x1b[${drawn}A` : '';
    // A backup's progress takes two lines; each is cleared before it is drawn again.
    const rows = [...lines].flatMap(([target, line]) =>
      line.split('\n').map((row, i) => `\x1b[2K${i === 0 && lines.size > 1 ? `${target}  ` : ''}${row}`),
    );
    process.stderr.write(`${up}\r${rows.join('\n')}\n`);
    drawn = rows.length;
  };
  return {
    source: (info, decoder) => {
      process.stderr.write(`${sourceLine(info, decoder)}\n`);
      // The bars continue below this line rather than overwrite it.
      drawn = 0;
    },
    customisation: (c) => {
      process.stderr.write(`${customisationLine(c)}\n`);
      drawn = 0;
    },
    progress: (p) => {
      lines.set(p.target, progressLine(p));
      draw();
    },
    result: (r) => process.stdout.write(`${resultLine(r, kind)}\n`),
    notice: (message) => {
      process.stderr.write(`\x1b[2K\rsluice: ${message}\n`);
      // The bars continue below the notice rather than overwrite it.
      drawn = 0;
    },
    end: () => {
      drawn = 0;
    },
  };
}

/** Plain lines on stderr at each phase change: readable in CI logs, where redrawing is noise. */
function plainReporter(kind: CancelledJob): Reporter {
  const phases = new Map<string, string>();
  return {
    source: (info, decoder) => process.stderr.write(`${sourceLine(info, decoder)}\n`),
    customisation: (c) => process.stderr.write(`${customisationLine(c)}\n`),
    progress: (p) => {
      const phase = loggedPhase(p.phase);
      if (phases.get(p.target) === phase) return;
      phases.set(p.target, phase);
      process.stderr.write(`${p.target}: ${phase}…\n`);
    },
    result: (r) => process.stdout.write(`${resultLine(r, kind)}\n`),
    notice: (message) => process.stderr.write(`sluice: ${message}\n`),
    end: () => undefined,
  };
}

/** A reporter for a job of `kind`, which decides what a cancelled result says of the drive (or the file). */
export function createReporter(json: boolean, kind: CancelledJob = 'flash'): Reporter {
  if (json) return jsonReporter();
  return process.stderr.isTTY ? terminalReporter(kind) : plainReporter(kind);
}

/**
 * Reports a result that ends a command before its job ran, and returns the exit code. Here, not
 * beside the file flash, so that commands that only judge a drive (check, erase) load no writer.
 */
export function reportOne(json: boolean, result: TargetResult): number {
  createReporter(json).result(result);
  return exitCodeFor([result]);
}
