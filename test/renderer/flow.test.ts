import { describe, expect, it } from 'vitest';
import type { ImageInfo } from '../../common/domain/image.js';
import type { DriveInfo, JobEnd } from '../../common/contracts/app-models.js';
import { DEFAULT_SETTINGS } from '../../common/contracts/settings.js';
import { judgeDrive } from '../../common/domain/verdict.js';
import { usbCard } from '../support/drive-fixtures.js';
import { rawImageInfo } from '../support/image-fixtures.js';
import {
  availableDrives,
  canFlash,
  flowReducer,
  INITIAL_STATE,
  isSelectable,
  jobRows,
  type FlowState,
} from '../../renderer/src/flow.js';

const image: ImageInfo = rawImageInfo('/home/u/os.img', 4e9);
const card = (device: string, overrides: Partial<DriveInfo> = {}): DriveInfo => ({
  ...usbCard(device, { description: `Card ${device}` }),
  verdicts: [],
  ...overrides,
});

function ready(): FlowState {
  let state = flowReducer(INITIAL_STATE, { type: 'settings', settings: { ...DEFAULT_SETTINGS } });
  state = flowReducer(state, { type: 'image-chosen', image });
  state = flowReducer(state, { type: 'drives', drives: [card('/dev/sdb'), card('/dev/sdc')] });
  return flowReducer(state, { type: 'select', devices: ['/dev/sdb', '/dev/sdc'], confirmedSystem: [] });
}

describe('the screen state', () => {
  it('can flash only with an image and a chosen drive', () => {
    expect(canFlash(ready())).toBe(true);
    expect(canFlash(flowReducer(ready(), { type: 'image-cleared' }))).toBe(false);
    expect(canFlash(flowReducer(ready(), { type: 'select', devices: [], confirmedSystem: [] }))).toBe(false);
  });

  it("does not move the choice to another drive that took a removed one's name between two listings", () => {
    // A card of another size in the same reader.
    const swapped = flowReducer(ready(), {
      type: 'drives',
      drives: [card('/dev/sdb', { size: 8e9 }), card('/dev/sdc')],
    });
    expect(swapped.selected).toEqual(['/dev/sdc']);
    expect(swapped.driveNotice).toBe('Card /dev/sdb (/dev/sdb) was removed.');
    // A loop number taken by another loop of the same size: its backing file names it apart.
    const loop = (file: string): DriveInfo =>
      card('/dev/loop7', { virtual: true, bus: 'virtual', description: `Loop device (${file})` });
    let state = flowReducer(ready(), { type: 'drives', drives: [loop('a.img')] });
    state = flowReducer(state, { type: 'select', devices: ['/dev/loop7'], confirmedSystem: [] });
    state = flowReducer(state, { type: 'drives', drives: [loop('a.img')] });
    expect(state.selected).toEqual(['/dev/loop7']);
    state = flowReducer(state, { type: 'drives', drives: [loop('b.img')] });
    expect(state.selected).toEqual([]);
    // A card whose partition labels changed (its description) is still the card chosen.
    const relabelled = flowReducer(ready(), {
      type: 'drives',
      drives: [card('/dev/sdb', { description: 'Card (boot, rootfs)' }), card('/dev/sdc')],
    });
    expect(relabelled.selected).toEqual(['/dev/sdb', '/dev/sdc']);
    // A card of the same size swapped in the same reader: where the OS numbers media, it is another.
    const numbered = flowReducer(
      flowReducer(ready(), { type: 'drives', drives: [card('/dev/sdb', { medium: '41' }), card('/dev/sdc')] }),
      { type: 'select', devices: ['/dev/sdb'], confirmedSystem: [] },
    );
    expect(
      flowReducer(numbered, { type: 'drives', drives: [card('/dev/sdb', { medium: '41' }), card('/dev/sdc')] })
        .selected,
    ).toEqual(['/dev/sdb']);
    const sameSize = flowReducer(numbered, {
      type: 'drives',
      drives: [card('/dev/sdb', { medium: '42' }), card('/dev/sdc')],
    });
    expect(sameSize.selected).toEqual([]);
    expect(sameSize.driveNotice).toBe('Card /dev/sdb (/dev/sdb) was removed.');
  });

  it('drops an unplugged drive from the choice and says so', () => {
    const state = flowReducer(ready(), { type: 'drives', drives: [card('/dev/sdc')] });
    expect(state.selected).toEqual(['/dev/sdc']);
    expect(state.driveNotice).toBe('Card /dev/sdb (/dev/sdb) was removed.');
  });

  it('drops a drive that a new verdict blocks (a bigger image made it too small)', () => {
    const verdicts = judgeDrive(card('/dev/sdb'), { size: 64e9, storedOn: null });
    const state = flowReducer(ready(), { type: 'drives', drives: [card('/dev/sdb', { verdicts }), card('/dev/sdc')] });
    expect(state.selected).toEqual(['/dev/sdc']);
    expect(state.driveNotice).toContain('can no longer be used');
  });

  it('counts a drive as available only if it is listed without "show all drives" and can be chosen', () => {
    const judged = (drive: DriveInfo): DriveInfo => ({
      ...drive,
      verdicts: judgeDrive(drive, { size: 4e9, storedOn: null }),
    });
    const drives = [
      judged(card('/dev/sdb')),
      judged(card('/dev/sdc', { size: 2e9 })),
      judged(card('/dev/loop3', { bus: 'virtual', virtual: true })),
      judged(card('/dev/sda', { system: 'internal', removable: false })),
      judged(card('/dev/vda', { system: 'running', removable: false, mountpoints: ['/'] })),
    ];
    expect(drives.map(isSelectable)).toEqual([true, false, true, true, false]);
    const state = flowReducer(INITIAL_STATE, { type: 'drives', drives });
    expect(
      availableDrives(flowReducer(state, { type: 'settings', settings: { ...DEFAULT_SETTINGS, showVirtual: false } })),
    ).toBe(1);
    expect(
      availableDrives(flowReducer(state, { type: 'settings', settings: { ...DEFAULT_SETTINGS, showVirtual: true } })),
    ).toBe(2);
  });

  it('keeps the drives of a running flash even if they vanish from the live list', () => {
    let state = flowReducer(ready(), { type: 'flash-starting' });
    state = flowReducer(state, { type: 'drives', drives: [] });
    expect(state.running?.subject.kind === 'flash' && state.running.subject.targets.map((t) => t.device)).toEqual([
      '/dev/sdb',
      '/dev/sdc',
    ]);
    const end: JobEnd = {
      kind: 'flash',
      results: [{ status: 'failed', target: '/dev/sdb', bytes: 5, code: 'target-unplugged', message: 'gone' }],
      verify: true,
      seconds: 1,
    };
    state = flowReducer(state, { type: 'job-ended', end });
    expect(state.running).toBeNull();
    expect(state.finished?.end).toBe(end);
    expect(state.finished?.subject.kind === 'flash' && state.finished.subject.targets).toHaveLength(2);
  });

  it('goes back to the steps when the start is refused, with the reason', () => {
    let state = flowReducer(ready(), { type: 'flash-starting' });
    state = flowReducer(state, { type: 'flash-refused', message: 'A flash is already running.' });
    expect(state.running).toBeNull();
    expect(state.startError).toBe('A flash is already running.');
  });

  it('runs a backup like a flash, keyed by its file, and goes back to the steps as they were', () => {
    const before = ready();
    const [drive] = before.drives;
    if (drive === undefined) throw new Error('no drive in the fixture');
    let state = flowReducer(before, { type: 'backup-starting', drive, file: '/home/u/card.img.zst' });
    expect(state.running).toMatchObject({
      subject: { kind: 'backup', drive, file: '/home/u/card.img.zst' },
      progress: {},
      cancelling: false,
    });
    expect(jobRows(state.running?.subject ?? { kind: 'backup', drive, file: '' })).toEqual([
      { key: '/home/u/card.img.zst', name: 'card.img.zst', detail: '/home/u/card.img.zst' },
    ]);
    state = flowReducer(state, {
      type: 'progress',
      progress: { phase: 'writing', target: '/home/u/card.img.zst', bytesDone: 1, bytesTotal: 2, speed: 1, eta: 1 },
    });
    expect(Object.keys(state.running?.progress ?? {})).toEqual(['/home/u/card.img.zst']);
    const end: JobEnd = {
      kind: 'backup',
      results: [{ status: 'cancelled', target: '/home/u/card.img.zst', bytes: 1 }],
      verify: true,
      seconds: 1,
    };
    state = flowReducer(state, { type: 'job-ended', end });
    expect(state.finished).toMatchObject({ subject: { kind: 'backup', drive }, end });
    state = flowReducer(state, { type: 'back-to-steps' });
    // Refused before it started: back to the steps, and no flash error there (the backup dialog says why).
    const refused = flowReducer(flowReducer(state, { type: 'backup-starting', drive, file: '/x.img' }), {
      type: 'backup-refused',
    });
    expect(refused.running).toBeNull();
    expect(refused.startError).toBeNull();
    expect(state.finished).toBeNull();
    expect(state.image).toBe(before.image);
    expect(state.selected).toEqual(before.selected);
  });

  it('a drive being checked for fake capacity (or erased, or compared with an image) is the job; its end returns to the steps as they were; a refusal is said under them', () => {
    const before = ready();
    const [drive] = before.drives;
    if (drive === undefined) throw new Error('no drive in the fixture');
    let state = flowReducer(before, { type: 'check-starting', drive });
    expect(state.running).toMatchObject({ subject: { kind: 'check', drive }, verify: true });
    expect(jobRows({ kind: 'check', drive })).toEqual([
      { key: drive.device, name: 'Card /dev/sdb', detail: drive.device },
    ]);
    const end: JobEnd = {
      kind: 'check',
      results: [{ status: 'ok', target: drive.device, bytes: 4e9, written: false, verified: true, seconds: 0.3 }],
      verify: true,
      seconds: 0.4,
    };
    state = flowReducer(flowReducer(state, { type: 'job-ended', end }), { type: 'back-to-steps' });
    expect(state.finished).toBeNull();
    expect(state.image).toBe(before.image);
    expect(state.selected).toEqual(before.selected);
    const refused = flowReducer(flowReducer(state, { type: 'check-starting', drive }), {
      type: 'flash-refused',
      message: 'Sluice is already flashing',
    });
    expect(refused).toMatchObject({ running: null, startError: 'Sluice is already flashing' });
    // An erase is a job about one drive the same way.
    const erasing = flowReducer(state, { type: 'erase-starting', drive });
    expect(erasing.running).toMatchObject({ subject: { kind: 'erase', drive }, verify: true });
    expect(jobRows({ kind: 'erase', drive })).toEqual(jobRows({ kind: 'check', drive }));
    // A comparison with an image too, keeping the image it compares with.
    const comparing = flowReducer(state, { type: 'compare-starting', drive, image });
    expect(comparing.running).toMatchObject({ subject: { kind: 'verify', drive, image } });
    expect(jobRows({ kind: 'verify', drive, image })).toEqual(jobRows({ kind: 'check', drive }));
  });

  it('ignores progress and ends that arrive with no flash running', () => {
    const state = ready();
    expect(
      flowReducer(state, {
        type: 'progress',
        progress: { phase: 'writing', target: '/dev/sdb', bytesDone: 1, bytesTotal: 2, speed: 1, eta: 1 },
      }),
    ).toBe(state);
    expect(
      flowReducer(state, { type: 'job-ended', end: { kind: 'flash', results: [], verify: true, seconds: 0 } }),
    ).toBe(state);
  });

  describe('an image the system handed over (double-click, "Open with", command line)', () => {
    const other: ImageInfo = { ...image, source: '/home/u/other.img', name: 'other.img' };
    const busy = {
      ok: false,
      error: { code: 'busy', message: 'other.img was not opened: a flash is running.' },
    } as const;
    const end: JobEnd = {
      kind: 'flash',
      results: [{ status: 'ok', target: '/dev/sdb', bytes: 4e9, written: true, seconds: 60, verified: true }],
      verify: true,
      seconds: 60,
    };

    it('is chosen on the steps, keeping the chosen drives (their verdicts follow from the main process)', () => {
      const state = flowReducer(ready(), { type: 'image-opened', result: { ok: true, value: other } });
      expect(state.image).toBe(other);
      expect(state.selected).toEqual(['/dev/sdb', '/dev/sdc']);
    });

    it('that cannot be opened shows why on the image step and keeps the image there was', () => {
      const state = flowReducer(ready(), {
        type: 'image-opened',
        result: { ok: false, error: { code: 'source-not-found', message: '/x.img: no such file.' } },
      });
      expect(state.image).toBe(image);
      expect(state.imageError).toBe('/x.img: no such file.');
    });

    it('refused mid-flash is a notice on the progress screen, and the flash keeps its image and drives', () => {
      const flashing = flowReducer(ready(), { type: 'flash-starting' });
      const state = flowReducer(flashing, { type: 'image-opened', result: busy });
      expect(state.running).toEqual({ ...flashing.running, notice: busy.error.message });
      expect(state.image).toBe(image);
      // The notice goes with the flash it was about.
      expect(flowReducer(state, { type: 'job-ended', end }).finished).toMatchObject({
        subject: { kind: 'flash', image },
        end,
      });
    });

    it('on the end screen starts a new flash with it: back to the steps, no drive chosen', () => {
      const finished = flowReducer(flowReducer(ready(), { type: 'flash-starting' }), { type: 'job-ended', end });
      const state = flowReducer(finished, { type: 'image-opened', result: { ok: true, value: other } });
      expect(state).toMatchObject({ finished: null, running: null, image: other, selected: [], imageError: null });
      const failed = flowReducer(finished, {
        type: 'image-opened',
        result: { ok: false, error: { code: 'source-read-error', message: 'cannot be read' } },
      });
      expect(failed).toMatchObject({ finished: null, image, imageError: 'cannot be read' });
    });
  });
});
