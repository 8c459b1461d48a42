/**
 * The station's queue, on its own (the built Station class, with the app's test launcher: only this
 * test's loop devices, each helper in a throttling cgroup): with room for two jobs, three cards
 * inserted together run two at a time, the third waiting in the queue until one has ended. The
 * CLI's acceptance tests (test/cli/station.device.test.ts) cover the rest with the real limit, 16.
 */
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';
import { MAX_STATION_JOBS, type StationRow } from '../../../common/domain/station.js';
import { MiB } from '../../../common/domain/units.js';
import type * as StationModule from '../../../user/station/station.js';
import { readStationLog } from '../../../user/station/station-log.js';
import type * as StationLogModule from '../../../user/station/station-log.js';
import { builtProbeLaunch } from '../../support/built-modules.js';
import { describeDevices } from '../../support/device-suite.js';
import { attachLoop, createLoop, scratchDir, writeRandomFile } from '../../support/loop-device.js';
import { throttledGroup, throttleDevice } from '../../support/throttle.js';
import { testLauncher } from '../../e2e/app-harness.js';

/**
 * A station over the built Station class, for a 6 MiB image and `cards` card backings of 8 MiB
 * (its slots), with the app's test launcher in an unthrottled cgroup; a card is inserted by
 * attaching its backing. The caller removes the group.
 */
async function stationSetup(cards: number) {
  const { Station } = (await import(resolve('out/user/station/station.js'))) as typeof StationModule;
  const { StationLog } = (await import(resolve('out/user/station/station-log.js'))) as typeof StationLogModule;
  const { prepareImageInChild } = await builtProbeLaunch();
  const dir = scratchDir();
  const image = join(dir, 'image.img');
  writeRandomFile(image, 6 * MiB);
  const backings = Array.from({ length: cards }, (_, i) => join(dir, `card-${i + 1}.img`));
  for (const b of backings) writeRandomFile(b, 8 * MiB);
  const group = throttledGroup(createLoop({ size: MiB, dir }).path, 1e12);
  const log = await StationLog.open(join(dir, 'station.jsonl'));
  const stationImage = {
    request: { image, partitions: false },
    prepared: await prepareImageInChild({ image, partitions: false }),
    exact: false,
    profile: null,
    name: 'image.img',
    sha256: '0'.repeat(64),
    launch: await testLauncher(group.dir),
  };
  const rules = { imageSize: 6 * MiB, minSize: 6 * MiB, maxSize: 16 * MiB, slots: backings, virtual: true };
  const station = (options: Pick<StationModule.StationOptions, 'count' | 'maxJobs' | 'onRow' | 'onProblem'>) =>
    new Station({ image: stationImage, rules, log, ...options });
  return { station, backings, group, log, logPath: join(dir, 'station.jsonl') };
}

describeDevices('the station’s queue', () => {
  it('runs at most its limit of jobs at once; the next card waits, then runs', async () => {
    expect(MAX_STATION_JOBS).toBe(16);
    const { station: start, backings, group, log } = await stationSetup(3);
    const rows = new Map<number, StationRow[]>();
    /** When each row's job started (left the queue) and ended, by this process's clock. */
    const started = new Map<number, number>();
    const ended = new Map<number, number>();
    let running = 0;
    let mostRunning = 0;
    const station = start({
      count: 3,
      maxJobs: 2,
      onRow: (row) => {
        const history = rows.get(row.id) ?? [];
        const before = history.at(-1)?.phase;
        const active = (phase: StationRow['phase'] | undefined) =>
          phase !== undefined && phase !== 'queued' && phase !== 'done';
        if (!active(before) && active(row.phase)) {
          running += 1;
          started.set(row.id, performance.now());
        }
        if (active(before) && !active(row.phase)) {
          running -= 1;
          ended.set(row.id, performance.now());
        }
        mostRunning = Math.max(mostRunning, running);
        rows.set(row.id, [...history, row]);
      },
      onProblem: (message) => {
        throw new Error(message);
      },
    });
    try {
      await station.arm();
      // Three cards at once, each written at 2 MB/s: about 3 s a card.
      for (const b of backings) throttleDevice(group.dir, attachLoop(b).path, 2_000_000);
      await station.done;
      await log.close();
      const mine = [...rows.values()].filter((h) => backings.includes(h[0]?.slot ?? ''));
      expect(mine).toHaveLength(3);
      for (const history of mine) expect(history.at(-1)).toMatchObject({ phase: 'done', result: 'ok' });
      // Each card, at 2 MB/s from an image in the page cache, was seen limited by the drive while it was written.
      for (const history of mine)
        expect(
          history.some((r) => r.phase === 'writing' && r.progress?.limit?.by === 'drive'),
          JSON.stringify(history.map((r) => [r.phase, r.progress?.limit?.by])),
        ).toBe(true);
      expect(mostRunning).toBe(2);
      // The card that started last waited in the queue: its job began only once another had ended.
      const ids = mine.map((h) => h[0]?.id ?? 0).sort((a, b) => (started.get(a) ?? 0) - (started.get(b) ?? 0));
      const [first, second, last] = ids.map((id) => ({ start: started.get(id) ?? NaN, end: ended.get(id) ?? NaN }));
      expect(last?.start).toBeGreaterThanOrEqual(Math.min(first?.end ?? NaN, second?.end ?? NaN));
      expect(second?.start).toBeLessThan(first?.end ?? NaN);
    } finally {
      group.remove();
    }
  }, 60_000);

  it('a card whose row the front end fails to show is not taken, and uses up neither the count nor a card number', async () => {
    const { station: start, backings, group, log, logPath } = await stationSetup(2);
    const [first = '', second = ''] = backings;
    const problems: string[] = [];
    let failedOnce = false;
    const station = start({
      count: 1,
      onRow: (row) => {
        if (row.phase === 'queued' && row.slot === first && !failedOnce) {
          failedOnce = true;
          throw new Error('the window is gone');
        }
      },
      onProblem: (message) => problems.push(message),
    });
    try {
      await station.arm();
      const shownNot = attachLoop(first);
      await expect
        .poll(() => problems.filter((p) => p.includes(shownNot.path)))
        .toEqual([`The card in ${shownNot.path} could not be judged: the window is gone`]);
      // Not counted: the station still takes a card, as card 1.
      const taken = attachLoop(second);
      await station.done;
      await log.close();
      expect((await readStationLog(logPath)).entries.filter((e) => backings.includes(e.slot ?? ''))).toEqual([
        expect.objectContaining({ device: taken.path, result: 'ok', card: 1 }),
      ]);
    } finally {
      group.remove();
    }
  }, 60_000);

  it('a front end that fails to show a card’s end leaves its job’s place free: the station still ends', async () => {
    const { station: start, backings, group, log, logPath } = await stationSetup(1);
    const problems: string[] = [];
    const station = start({
      count: 1,
      maxJobs: 1,
      onRow: (row) => {
        if (row.phase === 'done' && row.slot === backings[0]) throw new Error('the window is gone');
      },
      onProblem: (message) => problems.push(message),
    });
    try {
      await station.arm();
      const card = attachLoop(backings[0] ?? '');
      const hung = new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 30_000).unref());
      expect(await Promise.race([station.done, hung]), 'the station never ended').not.toBe('hung');
      await log.close();
      expect((await readStationLog(logPath)).entries.filter((e) => backings.includes(e.slot ?? ''))).toEqual([
        expect.objectContaining({ device: card.path, result: 'ok', card: 1 }),
      ]);
      // Other workers' loop devices come and go meanwhile: only this card's problems are this test's.
      expect(problems.filter((p) => p.includes(card.path))).toEqual([
        `The card in ${card.path} (ok) could not be shown: the window is gone`,
      ]);
    } finally {
      group.remove();
    }
  }, 60_000);
});
