/**
 * `sluice check` beside `f3probe` (Debian's f3, the field's reference), on the same 4 GiB emulated
 * cards, throttled to an SD card's 20 MB/s for writes: each as a whole process, start-up included.
 */
import { GiB } from '../../common/domain/units.js';
import { CLI } from '../support/cli.js';
import { FAKE_CLAIMED, FAKE_REAL, fakeCard, removeFakeCard, type FakeBehaviour } from '../support/fake-card.js';
import { assertOwnedLoop, createLoop } from '../support/loop-device.js';
import { SD_CARD_BYTES_PER_SECOND, throttledGroup } from '../support/throttle.js';
import { measure, medianOf } from './measure.js';

/** What f3probe concludes: "is a counterfeit of type limbo", "is damaged", or "is the real thing". */
function f3Verdict(output: string): string {
  const fake = /counterfeit of type (\w+)/.exec(output)?.[1];
  const usable = /\*Usable\* size: ([\d.]+ \w+)/.exec(output)?.[1];
  if (fake !== undefined) return `${fake}, usable ${usable ?? '?'}`;
  if (/is damaged/.test(output)) return `"damaged", usable ${usable ?? '?'}`;
  return /real thing/.test(output) ? 'honest' : 'no answer';
}

function sluiceVerdict(output: string): string {
  const line = output.split('\n').find((l) => l.startsWith('{"type":"check"'));
  if (line === undefined) return 'no answer';
  const report = JSON.parse(line) as { kind: string | null; realBytes: number };
  return report.kind === null ? 'honest' : `${report.kind}, real ${(report.realBytes / 2 ** 20).toFixed(2)} MiB`;
}

export async function checkSection(runs: number, node: string): Promise<string> {
  const cards: { name: string; behaviour: FakeBehaviour | null; writeDelayMs?: number }[] = [
    { name: 'limbo: 4 GiB claimed, 256 MiB real', behaviour: { kind: 'limbo', real: FAKE_REAL } },
    // The emulator answers a small write in microseconds; a real card does not. 2 ms is the SD
    // Association's A1 class floor (500 random 4 KiB writes a second), so this row is a good card's
    // latency, not a slow one's. f3probe makes thousands of small writes, sluice check a few hundred.
    {
      name: "limbo, each write 2 ms (an A1 card's 500 write IOPS)",
      behaviour: { kind: 'limbo', real: FAKE_REAL },
      writeDelayMs: 2,
    },
    { name: 'wrap-around at 256 MiB', behaviour: { kind: 'wrap', real: FAKE_REAL } },
    { name: 'honest 4 GiB (sparse loop)', behaviour: null },
  ];
  const lines = [
    `### \`sluice check\` and \`f3probe\` on 4 GiB emulated cards, writes throttled to 20 MB/s (median of ${runs}, whole processes)`,
    '',
    '| card | sluice check s | peak RSS MB | answer | f3probe s | answer | sluice / f3probe |',
    '|---|---:|---:|---|---:|---|---:|',
  ];
  for (const { name, behaviour, writeDelayMs } of cards) {
    const fake =
      behaviour === null ? null : await fakeCard(FAKE_CLAIMED, behaviour, { writeDelayMs: writeDelayMs ?? 0 });
    const card = fake ?? createLoop({ size: 4 * GiB, fill: 'sparse' });
    assertOwnedLoop(card.path);
    const group = throttledGroup(card.path, SD_CARD_BYTES_PER_SECOND);
    try {
      const ours = await medianOf(runs, () =>
        measure(`${node} ${CLI} check --yes --json ${card.path}; true`, { cgroup: group.dir }),
      );
      const f3 = await medianOf(runs, () =>
        measure(`f3probe --time-ops ${card.path} 2>&1; true`, { cgroup: group.dir }),
      );
      lines.push(
        `| ${name} | ${ours.wallSeconds.toFixed(2)} | ${(ours.peakRssBytes / 1e6).toFixed(0)} | ${sluiceVerdict(ours.output)} | ${f3.wallSeconds.toFixed(2)} | ${f3Verdict(f3.output)} | ${(ours.wallSeconds / f3.wallSeconds).toFixed(2)} |`,
      );
    } finally {
      group.remove();
      if (fake !== null) await removeFakeCard(fake);
    }
  }
  return lines.join('\n');
}
