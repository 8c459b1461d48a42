/**
 * Issue 19's acceptance, through the built CLI: `sluice station` armed, then loop devices attached
 * over time, as cards are inserted into a reader. Other processes on this machine attach loop
 * devices too, so every station here is limited with --slots to the backing files this test made
 * (a loop device's slot is its backing file): the station never even considers anything else.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import type { StationLogEntry } from '../../common/domain/station.js';
import { assertTestTarget, CLI, collect, spawnCli, waitForEvent, type CliOptions } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import { fsckPartitions } from '../support/free-space.js';
import {
  attachLoop,
  createLoop,
  digestFile,
  scratchDir,
  smallTmpfs,
  writeRandomFile,
  type LoopDevice,
} from '../support/loop-device.js';
import { LAYOUT_BOOT_OFFSET, LAYOUT_IMAGE_SIZE, layoutImage } from '../support/os-image.js';
import { throttledGroup, throttleDevice } from '../support/throttle.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts `sluice station --yes --json --virtual` taking cards only in `slots` (backing files this test made). */
function spawnStation(
  image: string,
  slots: readonly string[],
  flags: string[],
  options: CliOptions = {},
): ChildProcess {
  for (const slot of slots)
    if (!/^(\/dev\/shm\/sluice-test-|\/tmp\/sluice-test-tmpfs-)[^/]+\/[^/]+$/.test(slot))
      throw new Error(`refusing to arm a test station on ${slot}: not a backing file of this test`);
  return spawnCli(
    ['station', '--yes', '--json', '--virtual', ...slots.flatMap((s) => ['--slots', s]), ...flags, image],
    options,
  );
}

/** The log's lines about `slots`: other loop devices that came and went on this machine are refused as outside-slots and left out. */
function logOf(path: string, slots: readonly string[]): StationLogEntry[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as StationLogEntry)
    .filter((e) => slots.includes(e.slot));
}

/** A file of the card's boot partition, read with mtools. */
function bootFile(device: string, name: string): string {
  return execFileSync('mtype', ['-i', `${device}@@${LAYOUT_BOOT_OFFSET}`, `::/${name}`], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
}

/** Attaches `backing` as a new loop device: a card inserted. */
function insert(backing: string, readOnly = false): LoopDevice {
  const loop = attachLoop(backing, { readOnly });
  assertTestTarget(loop.path);
  return loop;
}

describeDevices('sluice station (issue 19 acceptance)', () => {
  it('writes the good cards inserted after arming (pi-1, pi-2 in insertion order), refuses the too small and the read-only one with their reasons, and never touches a drive present before', async () => {
    const dir = scratchDir();
    const image = layoutImage(dir, 'pi-os');
    const cardSize = LAYOUT_IMAGE_SIZE + 16 * MiB;
    const present = createLoop({ size: cardSize, dir });
    const backings = {
      good1: join(dir, 'good-1.img'),
      small: join(dir, 'small.img'),
      readOnly: join(dir, 'read-only.img'),
      good2: join(dir, 'good-2.img'),
    };
    writeRandomFile(backings.good1, cardSize);
    writeRandomFile(backings.small, LAYOUT_IMAGE_SIZE - MiB);
    writeRandomFile(backings.readOnly, cardSize);
    writeRandomFile(backings.good2, cardSize);
    const untouched = [present.backing, backings.small, backings.readOnly].map((p) => [p, digestFile(p)] as const);
    const slots = [present.backing, ...Object.values(backings)];
    const log = join(dir, 'station.jsonl');
    const started = performance.now();
    const child = spawnStation(image, slots, ['--count', '2', '--hostname', 'pi-{n}', '--log', log]);
    const run = collect(child);
    const armed = await waitForEvent(child, (e) => e.type === 'armed');
    expect(armed['present']).toContain(present.path);

    const good1 = insert(backings.good1);
    await sleep(1000);
    insert(backings.small);
    await sleep(1000);
    insert(backings.readOnly, true);
    await sleep(1000);
    const good2 = insert(backings.good2);
    const result = await run;
    const seconds = (performance.now() - started) / 1000;
    expect(result.stderr).not.toMatch(/Error|sluice: /);
    expect(result.code).toBe(0);

    const entries = logOf(log, slots);
    const bySlot = new Map(entries.map((e) => [e.slot, e]));
    expect(entries).toHaveLength(4);
    const sha256 = createHash('sha256').update(readFileSync(image)).digest('hex');
    expect(bySlot.get(backings.good1)).toMatchObject({
      card: 1,
      device: good1.path,
      hostname: 'pi-1',
      result: 'ok',
      code: null,
      capacityCheck: 'passed',
      imageSha256: sha256,
      capacity: cardSize,
    });
    expect(bySlot.get(backings.good2)).toMatchObject({
      card: 2,
      device: good2.path,
      hostname: 'pi-2',
      result: 'ok',
      code: null,
      capacityCheck: 'passed',
    });
    // The filesystems' free space is left out (the default): what was written and what was left out make up the image.
    for (const slot of [backings.good1, backings.good2]) {
      const entry = bySlot.get(slot);
      expect(entry?.bytesSkipped, slot).toBeGreaterThan(0);
      expect((entry?.bytesWritten ?? 0) + (entry?.bytesSkipped ?? 0), slot).toBe(LAYOUT_IMAGE_SIZE);
    }
    expect(bySlot.get(backings.small)).toMatchObject({
      card: null,
      result: 'refused',
      code: 'target-too-small',
      hostname: null,
      bytesWritten: 0,
    });
    expect(bySlot.get(backings.readOnly)).toMatchObject({
      card: null,
      result: 'refused',
      code: 'target-read-only',
      hostname: null,
      bytesWritten: 0,
    });
    expect(bySlot.get(backings.small)?.message).toMatch(/too small/);
    expect(bySlot.get(backings.readOnly)?.message).toMatch(/read-only/);
    for (const e of entries.filter((x) => x.result === 'ok')) {
      expect(e.writeSpeed).toBeGreaterThan(0);
      expect(e.verifySpeed).toBeGreaterThan(0);
    }

    // Each good card holds the image with its own hostname, as `sluice verify` with that hostname confirms.
    // Verify compares what the flash wrote (free space left out, as the flash left it); fsck checks that the card's filesystems hold together around the old bytes in that free space.
    for (const [card, hostname] of [
      [good1, 'pi-1'],
      [good2, 'pi-2'],
    ] as const) {
      expect(bootFile(card.path, 'firstrun.sh')).toContain(`set_hostname '${hostname}'`);
      const verified = await collect(spawnCli(['verify', '--json', '--hostname', hostname, image, card.path]));
      expect(verified.events.find((e) => e.type === 'result')).toMatchObject({ status: 'ok' });
      fsckPartitions(card.backing, image, dir);
    }
    for (const [path, digest] of untouched) expect(digestFile(path), path).toBe(digest);

    // The CSV export: a header and one line per card, the refusals' reasons quoted whole.
    const csv = await collect(spawnCli(['station-csv', log]));
    expect(csv.code).toBe(0);
    const lines = csv.stdout.split('\r\n');
    expect(lines[0]).toBe(
      'time,card,slot,device,model,serial,capacity,capacityCheck,image,imageSha256,hostname,bytesWritten,bytesSkipped,writeSpeed,verifySpeed,repairedBlocks,seconds,result,code,message',
    );
    expect(lines.find((l) => l.includes(backings.good2))).toMatch(
      new RegExp(
        `^[^,]+,2,${backings.good2},${good2.path},.*,passed,pi-os\\.img,${sha256},pi-2,${bySlot.get(backings.good2)?.bytesWritten},${bySlot.get(backings.good2)?.bytesSkipped},\\d+,\\d+,0,[\\d.]+,ok,,$`,
      ),
    );
    expect(lines.find((l) => l.includes(backings.small))).toMatch(
      /,refused,target-too-small,"?\/dev\/loop\d+ is too small: .*"?$/,
    );
    console.log(
      `station: 2 cards of ${LAYOUT_IMAGE_SIZE / MiB} MiB customised and 2 refused in ${seconds.toFixed(1)} s (3 s of it inserting)`,
    );
  }, 120_000);

  it('a refused card is judged again when it changes: one grown past the image (losetup -c) is written; one still too small is refused once', async () => {
    const dir = scratchDir();
    const image = layoutImage(dir, 'pi-os');
    const cardSize = LAYOUT_IMAGE_SIZE + 16 * MiB;
    const backings = { small: join(dir, 'small.img'), growing: join(dir, 'growing.img') };
    writeRandomFile(backings.small, LAYOUT_IMAGE_SIZE - 4 * MiB);
    writeRandomFile(backings.growing, LAYOUT_IMAGE_SIZE - 4 * MiB);
    const slots = Object.values(backings);
    const log = join(dir, 'station.jsonl');
    /** The card in `loop` grows to `size` bytes, as a reader that reports a card's size late. */
    const grow = (loop: LoopDevice, size: number) => {
      assertTestTarget(loop.path);
      execFileSync('truncate', ['-s', String(size), loop.backing]);
      execFileSync('losetup', ['--set-capacity', loop.path]);
    };
    const child = spawnStation(image, slots, ['--count', '1', '--log', log]);
    const run = collect(child);
    await waitForEvent(child, (e) => e.type === 'armed');
    const refused = (loop: LoopDevice) =>
      waitForEvent(child, (e) => e.type === 'row' && e['device'] === loop.path && e['result'] === 'refused');

    // Too small for good: refused with its reason once, and not again when it changes and is still too small.
    const small = insert(backings.small);
    await refused(small);
    grow(small, LAYOUT_IMAGE_SIZE - 2 * MiB);
    const smallBefore = digestFile(backings.small);
    await sleep(3000);
    // Refused, then grown past the image: the station's one card.
    const growing = insert(backings.growing);
    await refused(growing);
    grow(growing, cardSize);
    const hung = new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 60_000).unref());
    const result = await Promise.race([run, hung]);
    if (result === 'hung') child.kill('SIGKILL');
    expect(result, 'the station never took the card once it had grown').not.toBe('hung');
    if (result === 'hung') return;
    expect(result.code).toBe(0);

    const entries = logOf(log, slots);
    expect(entries.filter((e) => e.slot === backings.small)).toEqual([
      expect.objectContaining({ device: small.path, result: 'refused', code: 'target-too-small', card: null }),
    ]);
    expect(entries.filter((e) => e.slot === backings.growing)).toEqual([
      expect.objectContaining({ device: growing.path, result: 'refused', code: 'target-too-small', card: null }),
      expect.objectContaining({ device: growing.path, result: 'ok', card: 1, capacity: cardSize }),
    ]);
    const smallRows = result.events.filter(
      (e) => e.type === 'row' && e['device'] === small.path && e['result'] === 'refused',
    );
    expect(smallRows).toHaveLength(1);
    expect(digestFile(backings.small)).toBe(smallBefore);
    const verified = await collect(spawnCli(['verify', '--json', image, growing.path]));
    expect(verified.events.find((e) => e.type === 'result')).toMatchObject({ status: 'ok' });
  }, 120_000);

  it('one card failing mid-write stops no other: the card beside it is written and verified', async () => {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    writeRandomFile(image, 24 * MiB);
    // This card claims 32 MiB, but its backing file lives on 8 MiB of tmpfs: writing fails past it.
    const failing = join(smallTmpfs(8 * MiB), 'failing.img');
    execFileSync('truncate', ['-s', String(32 * MiB), failing]);
    const good = join(dir, 'good.img');
    writeRandomFile(good, 32 * MiB);
    const log = join(dir, 'station.jsonl');
    const child = spawnStation(image, [failing, good], ['--count', '2', '--log', log]);
    const run = collect(child);
    await waitForEvent(child, (e) => e.type === 'armed');
    insert(failing);
    // More than one listing apart (1 s plus the listing's own time), so the numbers follow insertion.
    await sleep(1500);
    const goodCard = insert(good);
    const result = await run;
    expect(result.code).toBe(1);
    const bySlot = new Map(logOf(log, [failing, good]).map((e) => [e.slot, e]));
    expect(bySlot.get(failing)).toMatchObject({ card: 1, result: 'failed', code: 'target-full' });
    expect(bySlot.get(good)).toMatchObject({ card: 2, result: 'ok', code: null, bytesWritten: 24 * MiB });
    execFileSync('cmp', ['-n', String(24 * MiB), image, goodCard.path]);
  }, 60_000);

  it('an .xz image is decoded once, at arming, for every card: both cards hold the image, and the copy is gone when the station stops', async () => {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    writeRandomFile(image, 16 * MiB);
    execFileSync('xz', ['-T2', '-0', '-k', image]);
    const cache = scratchDir();
    const backings = [join(dir, 'card-1.img'), join(dir, 'card-2.img')];
    for (const backing of backings) writeRandomFile(backing, 24 * MiB);
    const log = join(dir, 'station.jsonl');
    const child = spawnStation(`${image}.xz`, backings, ['--count', '2', '--log', log], {
      env: { SLUICE_CACHE_DIR: cache },
    });
    const run = collect(child);
    await waitForEvent(child, (e) => e.type === 'armed');
    const cards = backings.map((backing) => insert(backing));
    const result = await run;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/The image is decoded once, into .*, for every card\./);
    expect(logOf(log, backings).map((e) => e.result)).toEqual(['ok', 'ok']);
    for (const card of cards) execFileSync('cmp', ['-n', String(16 * MiB), image, card.path]);
    expect(readdirSync(join(cache, 'images'))).toEqual([]);
  }, 60_000);

  it("the decoded copy outlives a crash and is the next station's, with no decoding again; --keep keeps it, and without it the station that ends removes it", async () => {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    writeRandomFile(image, 16 * MiB);
    execFileSync('xz', ['-T2', '-0', '-k', image]);
    const cache = scratchDir();
    const env = { SLUICE_CACHE_DIR: cache };
    const entries = () => readdirSync(join(cache, 'images')).sort();
    const card = (name: string) => {
      const backing = join(dir, `${name}.img`);
      writeRandomFile(backing, 24 * MiB);
      return backing;
    };
    /** A station of one card, run to its end; the card holds the image after. */
    const oneCard = async (flags: string[]) => {
      const backing = card(`card-${flags.join('')}`);
      const child = spawnStation(
        `${image}.xz`,
        [backing],
        ['--count', '1', '--log', join(dir, 'log.jsonl'), ...flags],
        { env },
      );
      const run = collect(child);
      await waitForEvent(child, (e) => e.type === 'armed');
      const inserted = insert(backing);
      const result = await run;
      expect(result.code, result.stderr).toBe(0);
      execFileSync('cmp', ['-n', String(16 * MiB), image, inserted.path]);
      return result;
    };

    const crashed = spawnStation(`${image}.xz`, [card('never')], ['--log', join(dir, 'crashed.jsonl')], { env });
    const crashedRun = collect(crashed);
    await waitForEvent(crashed, (e) => e.type === 'armed');
    crashed.kill('SIGKILL');
    expect((await crashedRun).stderr).toMatch(/The image is decoded once, into .*, for every card\./);
    const left = entries();
    expect(left).toHaveLength(2);
    const listed = JSON.parse(
      execFileSync(process.execPath, [CLI, 'cache', 'list', '--json'], {
        env: { ...process.env, ...env },
        encoding: 'utf8',
      }),
    ) as { entries: { name: string; complete: boolean; bytes: number }[] };
    expect(listed.entries).toMatchObject([{ name: 'image.img.xz, decoded', complete: true, bytes: 16 * MiB }]);

    const kept = await oneCard(['--keep']);
    expect(kept.stderr).toMatch(
      /The image was decoded by an earlier station, into .*, for every card\. It stays in the image cache when the station stops\./,
    );
    expect(entries()).toEqual(left);

    const last = await oneCard([]);
    expect(last.stderr).toMatch(/The image was decoded by an earlier station/);
    expect(entries()).toEqual([]);
  }, 90_000);

  it('--cache-limit below the decoded image: each card decodes it again, and says why', async () => {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    writeRandomFile(image, 8 * MiB);
    execFileSync('xz', ['-T2', '-0', '-k', image]);
    const cache = scratchDir();
    const backing = join(dir, 'card.img');
    writeRandomFile(backing, 16 * MiB);
    const flags = ['--count', '1', '--log', join(dir, 'log.jsonl'), '--cache-limit', '4M'];
    const child = spawnStation(`${image}.xz`, [backing], flags, { env: { SLUICE_CACHE_DIR: cache } });
    const run = collect(child);
    await waitForEvent(child, (e) => e.type === 'armed');
    const inserted = insert(backing);
    const result = await run;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(
      /The image is decoded again for each card: .* more than the cache's limit of 4\.0 MB\./,
    );
    execFileSync('cmp', ['-n', String(8 * MiB), image, inserted.path]);
  }, 60_000);

  it('--exact: every card gets every byte, free space included, over what the card held', async () => {
    const dir = scratchDir();
    const image = layoutImage(dir, 'none');
    const backing = join(dir, 'card.img');
    writeRandomFile(backing, LAYOUT_IMAGE_SIZE + 16 * MiB);
    const log = join(dir, 'station.jsonl');
    const child = spawnStation(image, [backing], ['--count', '1', '--log', log, '--exact']);
    const run = collect(child);
    await waitForEvent(child, (e) => e.type === 'armed');
    const card = insert(backing);
    const result = await run;
    expect(result.code, result.stderr).toBe(0);
    expect(logOf(log, [backing])).toMatchObject([
      { card: 1, result: 'ok', code: null, bytesWritten: LAYOUT_IMAGE_SIZE, bytesSkipped: 0 },
    ]);
    execFileSync('cmp', ['-n', String(LAYOUT_IMAGE_SIZE), image, card.path]);
  }, 60_000);

  it('Ctrl-C takes no more cards, cancels the card being written, logs it as cancelled and exits 130', async () => {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    writeRandomFile(image, 24 * MiB);
    const slow = join(dir, 'slow.img');
    writeRandomFile(slow, 32 * MiB);
    const log = join(dir, 'station.jsonl');
    const group = throttledGroup(createLoop({ size: MiB, dir }).path, 1e12);
    try {
      const child = spawnStation(image, [slow], ['--log', log], { cgroup: group.dir });
      const run = collect(child);
      await waitForEvent(child, (e) => e.type === 'armed');
      throttleDevice(group.dir, insert(slow).path, 2_000_000);
      await waitForEvent(child, (e) => e.type === 'row' && e['phase'] === 'writing');
      child.kill('SIGINT');
      const result = await run;
      expect(result.code).toBe(130);
      expect(logOf(log, [slow])).toMatchObject([{ card: 1, result: 'cancelled' }]);
      expect(result.events.at(-1)).toEqual({ type: 'stopped' });
    } finally {
      group.remove();
    }
  }, 60_000);

  describe('killed with -9 mid-batch', () => {
    it('leaves a complete log line for every card that finished, and no partial line', async () => {
      const dir = scratchDir();
      const image = join(dir, 'image.img');
      writeRandomFile(image, 24 * MiB);
      const fast = [1, 2, 3].map((i) => join(dir, `fast-${i}.img`));
      const slow = join(dir, 'slow.img');
      for (const path of [...fast, slow]) writeRandomFile(path, 32 * MiB);
      const slots = [...fast, slow];
      const log = join(dir, 'station.jsonl');
      // One group for the station and its helpers; only the slow card gets a rule: 2 MB/s, 12 s for the image.
      const group = throttledGroup(createLoop({ size: MiB, dir }).path, 1e12);
      try {
        const child = spawnStation(image, slots, ['--log', log], { cgroup: group.dir });
        const run = collect(child);
        await waitForEvent(child, (e) => e.type === 'armed');
        const slowCard = insert(slow);
        // A few milliseconds after it appears; the station's helper needs far longer to start writing.
        throttleDevice(group.dir, slowCard.path, 2_000_000);
        for (const path of fast) {
          await sleep(300);
          insert(path);
        }
        for (let tries = 0; logOf(log, fast).length < fast.length && tries < 300; tries++) await sleep(100);
        expect(logOf(log, fast)).toHaveLength(3);
        child.kill('SIGKILL');
        const result = await run;
        expect(result.signal).toBe('SIGKILL');
        const text = readFileSync(log, 'utf8');
        expect(text.endsWith('\n')).toBe(true);
        const lines = text.split('\n').slice(0, -1);
        for (const line of lines) expect(() => JSON.parse(line) as unknown).not.toThrow();
        const entries = logOf(log, slots);
        expect(entries.map((e) => [e.slot, e.result]).sort()).toEqual(fast.map((f) => [f, 'ok']).sort());
        expect(entries.some((e) => e.slot === slow)).toBe(false);
      } finally {
        group.remove();
      }
    }, 120_000);
  });
});
