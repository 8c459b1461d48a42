import { describe, expect, it } from 'vitest';
import type { DriveInfo, FlashEnd, ImageInfo } from '../../electron/common/models.js';
import { DEFAULT_SETTINGS } from '../../electron/common/settings.js';
import { canFlash, flowReducer, INITIAL_STATE, type FlowState } from '../../renderer/src/flow.js';

const image: ImageInfo = { path: '/home/u/os.img', name: 'os.img', fileSize: 4e9, format: 'raw', supported: true, uncompressedSize: 4e9, partitionTable: 'gpt' };
const card = (device: string, overrides: Partial<DriveInfo> = {}): DriveInfo => ({
  device,
  name: `Card ${device}`,
  size: 32e9,
  bus: 'USB',
  removable: true,
  virtual: false,
  readOnly: false,
  system: false,
  mountpoints: [],
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
  it('can flash only with a supported image and a chosen drive', () => {
    expect(canFlash(ready())).toBe(true);
    expect(canFlash(flowReducer(ready(), { type: 'image-chosen', image: { ...image, format: 'xz', supported: false } }))).toBe(false);
    expect(canFlash(flowReducer(ready(), { type: 'select', devices: [], confirmedSystem: [] }))).toBe(false);
  });

  it('drops an unplugged drive from the choice and says so', () => {
    const state = flowReducer(ready(), { type: 'drives', drives: [card('/dev/sdc')] });
    expect(state.selected).toEqual(['/dev/sdc']);
    expect(state.driveNotice).toBe('Card /dev/sdb (/dev/sdb) was removed.');
  });

  it('drops a drive that a new verdict blocks (a bigger image made it too small)', () => {
    const state = flowReducer(ready(), { type: 'drives', drives: [card('/dev/sdb', { verdicts: ['too-small'] }), card('/dev/sdc')] });
    expect(state.selected).toEqual(['/dev/sdc']);
    expect(state.driveNotice).toContain('can no longer be used');
  });

  it('keeps the drives of a running flash even if they vanish from the live list', () => {
    let state = flowReducer(ready(), { type: 'flash-starting' });
    state = flowReducer(state, { type: 'drives', drives: [] });
    expect(state.flash?.targets.map((t) => t.device)).toEqual(['/dev/sdb', '/dev/sdc']);
    const end: FlashEnd = { results: [{ status: 'failed', target: '/dev/sdb', bytes: 5, code: 'target-unplugged', message: 'gone' }], verify: true, seconds: 1, notes: [] };
    state = flowReducer(state, { type: 'flash-ended', end });
    expect(state.flash).toBeNull();
    expect(state.finished?.end).toBe(end);
    expect(state.finished?.targets).toHaveLength(2);
  });

  it('goes back to the steps when the start is refused, with the reason', () => {
    let state = flowReducer(ready(), { type: 'flash-starting' });
    state = flowReducer(state, { type: 'flash-refused', message: 'A flash is already running.' });
    expect(state.flash).toBeNull();
    expect(state.startError).toBe('A flash is already running.');
  });

  it('ignores progress and ends that arrive with no flash running', () => {
    const state = ready();
    expect(flowReducer(state, { type: 'progress', progress: { phase: 'writing', target: '/dev/sdb', bytesDone: 1, bytesTotal: 2, speed: 1, eta: 1 } })).toBe(state);
    expect(flowReducer(state, { type: 'flash-ended', end: { results: [], verify: true, seconds: 0, notes: [] } })).toBe(state);
  });
});
