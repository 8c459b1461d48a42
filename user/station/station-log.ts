import { constants } from 'node:fs';
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { errorCode } from '../../common/domain/error-details.js';
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
   * Opens (creating it if needed) the log at `path` for appending, with the rights of whoever runs
   * the station (under sudo, the person who ran it: cli/broker.ts). A symbolic link is refused, not
   * followed: a log is a file of its own, never another file appended to.
   */
  static async open(path: string): Promise<StationLog> {
    try {
      return new StationLog(
        path,
        await open(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o644),
      );
    } catch (error) {
      if (errorCode(error) === 'ELOOP')
        throw new Error(
          `${path} is a symbolic link; the station log must be a file of its own (name the file itself, or a new one)`,
          { cause: error },
        );
      throw error;
    }
  }

  /** Appends `entry` and resolves once it is on disk; appends run one after another, in call order. */
  append(entry: StationLogEntry): Promise<void> {
    const line = Buffer.from(`${JSON.stringify(entry)}\n`);
    const next = this.pending.then(async () => {
      const { bytesWritten } = await this.file.write(line);
      if (bytesWritten !== line.length)
        throw new Error(`only ${bytesWritten} of ${line.length} bytes of a log line were written to ${this.path}`);
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
