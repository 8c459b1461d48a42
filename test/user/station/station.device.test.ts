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
import type * as StationLogModule from '../../../user/station/station-log.js';
import { builtProbeLaunch } from '../../support/built-modules.js';
import { describeDevices } from '../../support/device-suite.js';
import { attachLoop, createLoop, scratchDir, writeRandomFile } from '../../support/loop-device.js';
import { throttledGroup, throttleDevice } from '../../support/throttle.js';
import { testLauncher } from '../../e2e/app-harness.js';

describeDevices('the station’s queue', () => {
  it('runs at most its limit of jobs at once; the next card waits, then runs', async () => {
    expect(MAX_STATION_JOBS).toBe(16);
    const { Station } = (await import(resolve('out/user/station/station.js'))) as typeof StationModule;
    const { StationLog } = (await import(resolve('out/user/station/station-log.js'))) as typeof StationLogModule;
    const { prepareImageInChild } = await builtProbeLaunch();
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    writeRandomFile(image, 6 * MiB);
    const backings = [1, 2, 3].map((i) => join(dir, `card-${i}.img`));
    for (const b of backings) writeRandomFile(b, 8 * MiB);
    const group = throttledGroup(createLoop({ size: MiB, dir }).path, 1e12);
    const log = await StationLog.open(join(dir, 'station.jsonl'));
    const rows = new Map<number, StationRow[]>();
    /** When each row's job started (left the queue) and ended, by this process's clock. */
    const started = new Map<number, number>();
    const ended = new Map<number, number>();
    let running = 0;
    let mostRunning = 0;
    const station = new Station({
      image: {
        request: { image, partitions: false },
        prepared: await prepareImageInChild({ image, partitions: false }),
        exact: false,
        profile: null,
        name: 'image.img',
        sha256: '0'.repeat(64),
        launch: await testLauncher(group.dir),
      },
      rules: { imageSize: 6 * MiB, minSize: 6 * MiB, maxSize: 16 * MiB, slots: backings, virtual: true },
      log,
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
});
