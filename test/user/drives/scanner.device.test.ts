/**
 * Hot-plug, seen the way the app sees it: a scanner running while loop devices come and go. Loop
 * devices are virtual drives, so these scanners show virtual drives. Other tests on this machine
 * create loop devices too; every check here is about the test's own device.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { Drive } from '../../../common/domain/drive.js';
import { MiB } from '../../../common/domain/units.js';
import { DriveScanner, MAX_SCAN_INTERVAL_MS, type DriveEvent } from '../../../user/drives/scanner.js';
import { collect, spawnCli } from '../../support/cli.js';
import { describeDevices } from '../../support/device-suite.js';
import {
  attachLoop,
  createLoop,
  detachLoop,
  mountDevice,
  scratchDir,
  type LoopDevice,
} from '../../support/loop-device.js';
import { mkfsExt4 } from '../../support/partitions.js';

/** What the issue promises: a card inserted (or pulled) while the app is open shows within 2 s. */
const NOTICED_WITHIN_MS = 2000;

/** A running scanner that records its events and can wait for one. */
function recordingScanner(visibility: { showAll: boolean; showVirtual: boolean }) {
  const events: { at: number; event: DriveEvent }[] = [];
  const waiters: { match: (e: DriveEvent) => boolean; resolve: (e: { at: number; event: DriveEvent }) => void }[] = [];
  const scanner = new DriveScanner({
    ...visibility,
    onEvent: (event) => {
      const entry = { at: performance.now(), event };
      events.push(entry);
      for (const w of waiters.filter((w) => w.match(event))) w.resolve(entry);
    },
  });
  const waitFor = (match: (e: DriveEvent) => boolean, timeoutMs: number) =>
    new Promise<{ at: number; event: DriveEvent }>((resolve, reject) => {
      const seen = events.find((e) => match(e.event));
      if (seen !== undefined) return resolve(seen);
      const timer = setTimeout(() => reject(new Error(`no matching drive event within ${timeoutMs} ms`)), timeoutMs);
      waiters.push({ match, resolve: (e) => (clearTimeout(timer), resolve(e)) });
    });
  return { scanner, events, waitFor };
}

const about = (device: string, type: DriveEvent['type']) => (e: DriveEvent) =>
  e.type === type && e.drive.device === device;

/**
 * The scanner knows drives by path, and other tests on this machine attach loop devices all the
 * time: a freed /dev/loopN is handed to the next one at once. Within one listing interval that is
 * the same as a card swapped in a reader, and the scanner rightly says "changed". So the test's
 * device is known by its backing file's name, which no other test uses and which the scanner
 * shows in the drive's description; arriving means: listed with that name; leaving means: gone,
 * or listed with another name.
 */
interface OwnLoop extends LoopDevice {
  name: string;
}

function ownLoop(size: number): OwnLoop {
  const name = `scanner-${randomUUID().slice(0, 8)}.img`;
  const backing = join(scratchDir(), name);
  execFileSync('truncate', ['-s', String(size), backing]);
  return { ...attachLoop(backing), name };
}

const isOwn = (loop: OwnLoop, drive: Drive) => drive.device === loop.path && drive.description.includes(loop.name);
const arrived = (loop: OwnLoop) => (e: DriveEvent) => e.type !== 'removed' && isOwn(loop, e.drive);
const left = (loop: OwnLoop) => (e: DriveEvent) =>
  e.drive.device === loop.path && (e.type === 'removed' || !isOwn(loop, e.drive));

let running: DriveScanner[] = [];
afterEach(async () => {
  await Promise.all(running.map((s) => s.stop()));
  running = [];
});

describeDevices('the drive scanner', () => {
  it('reports a loop device attached while it runs, and its removal, each within 2 s', async () => {
    const { scanner, waitFor } = recordingScanner({ showAll: false, showVirtual: true });
    running.push(scanner);
    scanner.start();
    await new Promise((r) => setTimeout(r, MAX_SCAN_INTERVAL_MS + 200)); // the first listing is behind us

    const size = 24 * MiB;
    const attachedAt = performance.now();
    const loop = ownLoop(size);
    const added = await waitFor(arrived(loop), NOTICED_WITHIN_MS + 1000);
    expect(added.at - attachedAt).toBeLessThan(NOTICED_WITHIN_MS);
    expect(added.event.drive).toMatchObject({
      device: loop.path,
      size,
      bus: 'virtual',
      virtual: true,
      system: null,
      mountpoints: [],
    });
    expect(scanner.drives.find((d) => d.device === loop.path)?.size).toBe(size);

    const detachedAt = performance.now();
    detachLoop(loop.path);
    const removed = await waitFor(left(loop), NOTICED_WITHIN_MS + 1000);
    expect(removed.at - detachedAt).toBeLessThan(NOTICED_WITHIN_MS);
    // Under load a listing can catch the device mid-detach (its backing file momentarily unreadable)
    // and the next one see it once more; what counts is that it is gone within the 2 s.
    await expect
      .poll(() => scanner.drives.find((d) => isOwn(loop, d)), {
        timeout: Math.max(0, NOTICED_WITHIN_MS - (performance.now() - detachedAt)),
        interval: 100,
      })
      .toBeUndefined();
  });

  it('reports a drive that gets mounted as changed, with its new mountpoint', async () => {
    const loop = ownLoop(24 * MiB);
    mkfsExt4(loop.path, 'CHANGING');
    const { scanner, waitFor } = recordingScanner({ showAll: false, showVirtual: true });
    running.push(scanner);
    scanner.start();
    await waitFor(arrived(loop), NOTICED_WITHIN_MS);

    const mountpoint = mountDevice(loop.path);
    const changed = await waitFor(
      (e) => about(loop.path, 'changed')(e) && e.drive.mountpoints.length > 0,
      NOTICED_WITHIN_MS + 1000,
    );
    expect(changed.event.type === 'changed' && changed.event.previous.mountpoints).toEqual([]);
    expect(changed.event.drive.mountpoints).toEqual([mountpoint]);
  });

  it('shows virtual drives only while they are asked for', async () => {
    const loop = createLoop({ size: 8 * MiB, fill: 'zero' });
    const { scanner, waitFor, events } = recordingScanner({ showAll: false, showVirtual: false });
    running.push(scanner);
    scanner.start();
    await new Promise((r) => setTimeout(r, MAX_SCAN_INTERVAL_MS + 200));
    expect(events.some((e) => e.event.drive.device === loop.path)).toBe(false);

    scanner.setVisibility({ showAll: false, showVirtual: true });
    await waitFor(about(loop.path, 'added'), NOTICED_WITHIN_MS);
    scanner.setVisibility({ showAll: false, showVirtual: false });
    await waitFor(about(loop.path, 'removed'), NOTICED_WITHIN_MS);
  });

  it('resolves start() once the first listing is out, so "no drives" is never said before looking', async () => {
    const loop = ownLoop(8 * MiB);
    const { scanner, events } = recordingScanner({ showAll: false, showVirtual: true });
    running.push(scanner);
    await scanner.start();
    expect(scanner.drives.find((d) => isOwn(loop, d))?.size).toBe(8 * MiB);
    expect(events.some((e) => arrived(loop)(e.event))).toBe(true);
    // Started already: the same first listing, not another one.
    const count = events.length;
    await scanner.start();
    expect(events.length).toBe(count);
  });

  it('emits nothing after stop() resolves', async () => {
    const { scanner, events } = recordingScanner({ showAll: false, showVirtual: true });
    scanner.start();
    await scanner.stop();
    const count = events.length;
    const loop = createLoop({ size: 8 * MiB, fill: 'zero' });
    await new Promise((r) => setTimeout(r, MAX_SCAN_INTERVAL_MS + 500));
    expect(events.length).toBe(count);
    expect(events.some((e) => e.event.drive.device === loop.path)).toBe(false);
  });
});

describeDevices('sluice list', () => {
  it('lists loop devices with --virtual (or --all) only', async () => {
    const loop = createLoop({ size: 8 * MiB, fill: 'zero' });
    const list = async (...flags: string[]) =>
      JSON.parse((await collect(spawnCli(['list', '--json', ...flags]))).stdout) as Drive[];
    expect((await list()).map((d) => d.device)).not.toContain(loop.path);
    expect((await list('--virtual')).find((d) => d.device === loop.path)).toMatchObject({
      virtual: true,
      size: 8 * MiB,
      description: expect.stringMatching(/^Loop device \(disk-\d+\.img\)$/) as unknown,
    });
    expect((await list('--all')).map((d) => d.device)).toContain(loop.path);
  });
});
