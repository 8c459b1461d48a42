/**
 * `sluice verify --customisation DEVICE` reads what a customised card says of its first boot from
 * its FAT boot partition, through ranges the helper sends: a card flashed customised and not yet
 * booted, then the report firstrun.sh leaves (written here with mtools, as the script writes it:
 * the boot tests prove the script's side), with every step applied, with failed steps, over one
 * 512-byte cluster, cut short, and a drive without a FAT.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { FIRSTRUN_REPORT } from '../../user/customise/firstrun.js';
import { assertTestTarget, collect, flashCli, resultsOf, spawnCli, type CliRun } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import { createLoop, scratchDir, type LoopDevice } from '../support/loop-device.js';
import { LAYOUT_BOOT_OFFSET, LAYOUT_IMAGE_SIZE, layoutImage } from '../support/os-image.js';

const HEADING = 'Sluice first boot: 2026-11-29T04:02:11Z\n';
const NO_FAT = 'The drive has no FAT boot partition that Sluice could read.';
const FAILED_KEYMAP = 'FAILED keymap (exit status 1; the journal of this boot has its output)';

function firstBootCli(device: string, json = true): Promise<CliRun> {
  assertTestTarget(device);
  return collect(spawnCli(['verify', '--customisation', ...(json ? ['--json'] : []), device]));
}

describeDevices('sluice verify --customisation reads the first-boot report back', () => {
  let dir: string;
  let card: LoopDevice;

  /** Puts `text` on the card's boot partition as the report; removes firstrun.sh unless `keepScript`. */
  function leaveReport(text: string, keepScript = false): void {
    const file = join(dir, FIRSTRUN_REPORT);
    writeFileSync(file, text);
    const fat = `${card.path}@@${LAYOUT_BOOT_OFFSET}`;
    execFileSync('mcopy', ['-o', '-i', fat, file, `::/${FIRSTRUN_REPORT}`], { stdio: 'ignore' });
    // Gone already after an earlier case: mdel's complaint then is no failure.
    if (!keepScript) spawnSync('mdel', ['-i', fat, '::/firstrun.sh'], { stdio: 'ignore' });
  }

  beforeAll(async () => {
    dir = scratchDir();
    const image = layoutImage(dir, 'pi-os');
    card = createLoop({ size: LAYOUT_IMAGE_SIZE, dir });
    const flashed = await flashCli(image, [card.path], ['--no-eject', '--hostname', 'pi', '--keymap', 'de']);
    expect(resultsOf(flashed).get(card.path)).toMatchObject({ status: 'ok', customised: true });
  });

  it('a card not booted since it was customised: nothing applied yet, exit 1', async () => {
    const run = await firstBootCli(card.path);
    expect(run.code, run.stderr).toBe(1);
    expect(run.events).toEqual([{ type: 'first-boot', target: card.path, state: 'not-booted', partition: 1 }]);
    const words = await firstBootCli(card.path, false);
    expect(words.stdout).toContain('not booted yet: firstrun.sh is still on its boot partition (partition 1)');
  });

  it('a report with the script still there: the boot was cut short, exit 1', async () => {
    leaveReport(`${HEADING}applied hostname\n`, true);
    const run = await firstBootCli(card.path);
    expect(run.code, run.stderr).toBe(1);
    expect(run.events[0]).toMatchObject({ state: 'reported', finished: false });
  });

  it('a report with every step applied and the script gone: exit 0', async () => {
    leaveReport(`${HEADING}applied hostname\napplied keymap\n`);
    const run = await firstBootCli(card.path);
    expect(run.code, run.stderr).toBe(0);
    expect(run.events).toEqual([
      {
        type: 'first-boot',
        target: card.path,
        state: 'reported',
        partition: 1,
        ranAt: '2026-11-29T04:02:11Z',
        finished: true,
        steps: [
          { step: 'hostname', applied: true, detail: null },
          { step: 'keymap', applied: true, detail: null },
        ],
      },
    ]);
    expect((await firstBootCli(card.path, false)).stdout).toContain('Every setting applied (2).');
  });

  it('a failed step is named, with the others applied; a report over one cluster reads whole: exit 1', async () => {
    const applied = ['hostname', 'user', 'ssh', 'wifi', 'timezone'].map((s) => `applied ${s}\n`).join('');
    const extra = Array.from(
      { length: 6 },
      (_, i) => `FAILED step${i} (exit status ${i + 2}; padding past one cluster)\n`,
    );
    const text = `${HEADING}${applied}${FAILED_KEYMAP}\n${extra.join('')}`;
    expect(text.length).toBeGreaterThan(512);
    leaveReport(text);
    const run = await firstBootCli(card.path, false);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toContain('  FAILED   keymap (exit status 1; the journal of this boot has its output)\n');
    expect(run.stdout).toContain('  applied  timezone\n');
    expect(run.stdout).toContain('  FAILED   step5 (exit status 7; padding past one cluster)\n');
    expect(run.stdout).toContain('7 of 12 settings did not apply: keymap, step0, step1, step2, step3, step4, step5.');
  });

  it('a drive without a FAT boot partition: no report, said so, exit 1', async () => {
    const blank = createLoop({ size: 8 * 1024 * 1024, dir, fill: 'zero' });
    const run = await firstBootCli(blank.path);
    expect(run.code, run.stderr).toBe(1);
    const [event, ...more] = run.events;
    expect(more).toEqual([]);
    expect(event).toEqual({ type: 'first-boot', target: blank.path, state: 'none', why: NO_FAT });
  });
});
