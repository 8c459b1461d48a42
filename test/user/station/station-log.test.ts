import { appendFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { StationLogEntry } from '../../../common/domain/station.js';
import { readStationLog, StationLog } from '../../../user/station/station-log.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-station-log-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function entry(card: number): StationLogEntry {
  return {
    time: new Date(0).toISOString(),
    card,
    slot: `slot-${card}`,
    device: `/dev/sd${card}`,
    model: null,
    serial: null,
    capacity: 1,
    capacityCheck: null,
    image: 'i.img',
    imageSha256: null,
    hostname: `pi-${card}`,
    bytesWritten: 0,
    bytesSkipped: 0,
    writeSpeed: null,
    verifySpeed: null,
    repairedBlocks: 0,
    seconds: 0,
    result: 'ok',
    code: null,
    message: null,
  };
}

describe('StationLog', () => {
  it('appends whole lines in call order, after what the file already held', async () => {
    const path = join(dir, 'a.jsonl');
    appendFileSync(path, `${JSON.stringify(entry(1))}\n`);
    const log = await StationLog.open(path);
    await Promise.all([2, 3, 4, 5].map((n) => log.append(entry(n))));
    await log.close();
    const { entries, partial } = await readStationLog(path);
    expect(entries.map((e) => e.card)).toEqual([1, 2, 3, 4, 5]);
    expect(partial).toBe(0);
    expect(readFileSync(path, 'utf8').split('\n')).toHaveLength(6);
  });

  it('reading leaves out a last line a crash cut short, and counts it', async () => {
    const path = join(dir, 'b.jsonl');
    const line = JSON.stringify(entry(1));
    appendFileSync(path, `${line}\n${line.slice(0, 40)}`);
    expect(await readStationLog(path)).toEqual({ entries: [entry(1)], partial: 1 });
  });

  it('names the line that is not a log line', async () => {
    const path = join(dir, 'c.jsonl');
    appendFileSync(path, `${JSON.stringify(entry(1))}\nnot json\n`);
    await expect(readStationLog(path)).rejects.toThrow('line 2 is not a station log line');
  });
});

describe('a log that is a symbolic link', () => {
  it('is refused with a sentence, and the file it leads to is left as it was', async () => {
    const target = join(dir, 'elsewhere');
    writeFileSync(target, 'not a log\n');
    const link = join(dir, 'link.jsonl');
    symlinkSync(target, link);
    await expect(StationLog.open(link)).rejects.toThrow(
      `${link} is a symbolic link; the station log must be a file of its own`,
    );
    expect(readFileSync(target, 'utf8')).toBe('not a log\n');
  });
});
