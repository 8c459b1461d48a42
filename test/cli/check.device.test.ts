import { execFileSync } from 'node:child_process';
import { expect, it } from 'vitest';
import { GiB, MiB } from '../../common/domain/units.js';
import { collect, checkCli, spawnCli, spawnCheck } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import { FAKE_CLAIMED, FAKE_REAL, fakeCard, pullFakeCard, type FakeBehaviour } from '../support/fake-card.js';
import { createLoop, readBytes } from '../support/loop-device.js';

/**
 * XXH128 of a file of any size, read by the system's tool (a 4 GiB backing file does not fit a
 * Buffer): a change to any byte changes it, as it would SHA-256, which takes 23 s of CPU per 4 GiB
 * here (coreutils' sha256sum uses no SHA instructions) where XXH128 takes under one.
 */
function digest(path: string): string {
  return execFileSync('xxh128sum', [path], { encoding: 'utf8' }).split(' ')[0] ?? '';
}

/** Waits until the check's first marker (it writes the highest first: the drive's last block) is on the card. */
async function firstMarker(store: string, size: number): Promise<void> {
  for (let tries = 0; !readBytes(store, size - 512, 16).equals(Buffer.from('SLUICE-CAPACITY1')); tries++) {
    if (tries > 500) throw new Error('the check wrote no marker within 10 s');
    await new Promise((r) => setTimeout(r, 20));
  }
}

function reportOf(run: { events: { type: string; [key: string]: unknown }[] }): {
  type: string;
  claimedBytes: number;
  realBytes: number;
  kind: string | null;
  seconds: number;
} {
  return run.events.find((e) => e.type === 'check') as never;
}

describeDevices('sluice check', () => {
  const fakes: { name: string; behaviour: FakeBehaviour; kind: string }[] = [
    { name: 'limbo', behaviour: { kind: 'limbo', real: FAKE_REAL }, kind: 'limbo' },
    { name: 'wrap-around', behaviour: { kind: 'wrap', real: FAKE_REAL }, kind: 'wrap-around' },
    { name: 'errors past 256 MiB', behaviour: { kind: 'bad', from: FAKE_REAL, to: FAKE_CLAIMED }, kind: 'errors' },
  ];
  for (const fake of fakes) {
    it(`finds a 4 GiB ${fake.name} fake's real 256 MiB, and leaves its data as it was`, async () => {
      const card = await fakeCard(FAKE_CLAIMED, fake.behaviour, { random: true });
      const before = digest(card.store);
      const run = await checkCli(card.path);
      expect(run.code, run.stderr).toBe(1);
      expect(reportOf(run)).toMatchObject({ kind: fake.kind, claimedBytes: FAKE_CLAIMED, realBytes: FAKE_REAL });
      expect(run.events.find((e) => e.type === 'result')).toMatchObject({
        status: 'failed',
        code: 'target-fake-capacity',
        fakeCapacity: { kind: fake.kind, realBytes: FAKE_REAL },
      });
      expect(digest(card.store)).toBe(before);
    });
  }

  it('asks first, as erase does: without --yes and without a terminal it refuses and touches nothing', async () => {
    const loop = createLoop({ size: 64 * MiB });
    const before = digest(loop.backing);
    const run = await collect(spawnCli(['check', '--json', loop.path]));
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('without confirmation');
    expect(digest(loop.backing)).toBe(before);
  });

  it('says an honest 4 GiB drive holds what it claims, and leaves every byte as it was', async () => {
    const loop = createLoop({ size: 4 * GiB, fill: 'sparse' });
    const before = digest(loop.backing);
    const run = await checkCli(loop.path);
    expect(run.code, run.stderr).toBe(0);
    expect(reportOf(run)).toMatchObject({ kind: null, claimedBytes: 4 * GiB, realBytes: 4 * GiB });
    expect(digest(loop.backing)).toBe(before);
  });

  it('leaves a drive full of data as it was, and prints real and claimed capacity, kind and time', async () => {
    const loop = createLoop({ size: 256 * MiB });
    const before = digest(loop.backing);
    const run = await collect(spawnCheck(loop.path));
    expect(run.code).toBe(0);
    expect(digest(loop.backing)).toBe(before);
    const report = reportOf(run);
    expect(report.seconds).toBeGreaterThan(0);
    expect(report.seconds).toBeLessThan(10);
  });

  it('`sluice probe`, its former name, runs the same check and reports it as one', async () => {
    const loop = createLoop({ size: 64 * MiB });
    const before = digest(loop.backing);
    const run = await collect(spawnCheck(loop.path, {}, 'probe'));
    expect(run.code, run.stderr).toBe(0);
    expect(reportOf(run)).toMatchObject({ type: 'check', kind: null, claimedBytes: 64 * MiB, realBytes: 64 * MiB });
    expect(digest(loop.backing)).toBe(before);
  });

  it('Ctrl-C stops the check and puts every block back', async () => {
    const card = await fakeCard(1 * GiB, { kind: 'honest' }, { random: true, writeDelayMs: 50 });
    const before = digest(card.store);
    const child = spawnCheck(card.path);
    const done = collect(child);
    await firstMarker(card.store, 1 * GiB);
    child.kill('SIGINT');
    const run = await done;
    expect(run.code, run.stdout + run.stderr).toBe(130);
    expect(run.events.find((e) => e.type === 'result')).toMatchObject({ status: 'cancelled' });
    expect(digest(card.store)).toBe(before);
  });

  it('a card pulled mid-check: the result lists exactly the blocks it could not restore', async () => {
    const card = await fakeCard(1 * GiB, { kind: 'honest' }, { random: true, writeDelayMs: 50 });
    const original = readBytes(card.store, 0, 1 * GiB);
    const child = spawnCheck(card.path);
    const done = collect(child);
    await firstMarker(card.store, 1 * GiB);
    pullFakeCard(card);
    const run = await done;
    expect(run.code).toBe(1);
    const result = run.events.find((e) => e.type === 'result') as unknown as { status: string; message: string };
    expect(result.status).toBe('failed');
    const listed = /at byte offsets? ([\d, ]+)/.exec(result.message)?.[1]?.split(', ').map(Number) ?? [];
    expect(listed.length).toBeGreaterThan(0);
    // Exactly the blocks that differ from what the card held are named.
    const now = readBytes(card.store, 0, 1 * GiB);
    const changed: number[] = [];
    for (let at = 0; at < now.length; at += 512)
      if (!now.subarray(at, at + 512).equals(original.subarray(at, at + 512))) changed.push(at);
    expect(listed.sort((a, b) => a - b)).toEqual(changed);
    expect(result.message).toMatch(/could not be restored/);
  });
});
