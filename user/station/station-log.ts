import { open, readFile, type FileHandle } from 'node:fs/promises';
import type { StationLogEntry } from '../../common/domain/station.js';

/**
 * The station's log: one JSON line per card, appended and fsynced before the next one, so a crash
 * (kill -9, a power cut) loses at most the line being written. Each line goes out in one write(2)
 * on a file opened O_APPEND, so lines of cards that finish together never interleave.
 */
export class StationLog {
  private pending: Promise<void> = Promise.resolve();

  private constructor(
    readonly path: string,
    private readonly file: FileHandle,
  ) {}

  /**
   * Opens (creating it if needed) the log at `path` for appending. A log this call creates belongs
   * to `owner` when given: under sudo, the person who ran it, not root.
   */
  static async open(path: string, owner: { uid: number; gid: number } | null = null): Promise<StationLog> {
    const file = await open(path, 'a', 0o644);
    try {
      if (owner !== null && (await file.stat()).size === 0) await file.chown(owner.uid, owner.gid);
    } catch (error) {
      await file.close();
      throw error;
    }
    return new StationLog(path, file);
  }

  /** Appends `entry` and resolves once it is on disk; appends run one after another, in call order. */
  append(entry: StationLogEntry): Promise<void> {
    const line = Buffer.from(`${JSON.stringify(entry)}\n`);
    const next = this.pending.then(async () => {
      const { bytesWritten } = await this.file.write(line);
      if (bytesWritten !== line.length) throw new Error(`only ${bytesWritten} of ${line.length} bytes of a log line were written to ${this.path}`);
      await this.file.sync();
    });
    // A failed append fails its caller; the next one still runs.
    this.pending = next.catch(() => undefined);
    return next;
  }

  async close(): Promise<void> {
    await this.pending;
    await this.file.close();
  }
}

/**
 * The entries of a station log. A last line without its newline is one a crash cut short: it is
 * left out and counted in `partial`, never half-read.
 */
export async function readStationLog(path: string): Promise<{ entries: StationLogEntry[]; partial: number }> {
  const text = await readFile(path, 'utf8');
  const lines = text.split('\n');
  const last = lines.pop() ?? '';
  const entries: StationLogEntry[] = [];
  for (const [index, line] of lines.entries()) {
    if (line.trim() === '') continue;
    try {
      entries.push(JSON.parse(line) as StationLogEntry);
    } catch {
      throw new Error(`line ${index + 1} is not a station log line`);
    }
  }
  return { entries, partial: last === '' ? 0 : 1 };
}
