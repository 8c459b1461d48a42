/**
 * The app's screen state and every way it can change, as one pure reducer: what the page shows
 * follows from this state alone, and the transitions are testable without a browser.
 */
import { isDriveShown, refusalOf, type DriveVisibility } from '../../worker/common/verdict.js';
import type { ApiResult } from '../../electron/common/api-result.js';
import type { DriveInfo, FlashEnd, FlashProgress, ImageInfo } from '../../electron/common/models.js';
import type { Settings } from '../../electron/common/settings.js';
import { driveName } from './labels.js';

export interface RunningFlash {
  image: ImageInfo;
  /** The drives as they were when the flash started; the live list may lose them mid-write. */
  targets: DriveInfo[];
  verify: boolean;
  /** Latest report per target device. */
  progress: Record<string, FlashProgress>;
  /** The helper has been asked to stop and has not answered yet. */
  cancelling: boolean;
  /** Why an image the system handed over meanwhile was not opened. */
  notice: string | null;
}

export interface FinishedFlash {
  image: ImageInfo;
  targets: DriveInfo[];
  end: FlashEnd;
}

export interface FlowState {
  settings: Settings | null;
  image: ImageInfo | null;
  /** A dialog or probe is under way. */
  imageBusy: boolean;
  imageError: string | null;
  drives: DriveInfo[];
  /** Chosen target devices, in the order chosen. */
  selected: string[];
  /** Internal disks whose name the user typed to confirm. */
  confirmedSystem: string[];
  /** Said once, politely, when the list changed under the user (a chosen drive was unplugged). */
  driveNotice: string | null;
  /** Why the last start request was refused before anything was written. */
  startError: string | null;
  flash: RunningFlash | null;
  finished: FinishedFlash | null;
}

export const INITIAL_STATE: FlowState = {
  settings: null,
  image: null,
  imageBusy: false,
  imageError: null,
  drives: [],
  selected: [],
  confirmedSystem: [],
  driveNotice: null,
  startError: null,
  flash: null,
  finished: null,
};

export type FlowAction =
  | { type: 'settings'; settings: Settings }
  | { type: 'image-busy' }
  | { type: 'image-chosen'; image: ImageInfo }
  | { type: 'image-dialog-closed' }
  | { type: 'image-error'; message: string }
  | { type: 'image-cleared' }
  /** An image the system handed over (double-click, "Open with", command line), as the main process chose it or refused it. */
  | { type: 'image-opened'; result: ApiResult<ImageInfo> }
  | { type: 'drives'; drives: DriveInfo[] }
  | { type: 'select'; devices: string[]; confirmedSystem: string[] }
  | { type: 'flash-starting' }
  | { type: 'flash-refused'; message: string }
  | { type: 'progress'; progress: FlashProgress }
  | { type: 'cancelling' }
  | { type: 'flash-ended'; end: FlashEnd }
  | { type: 'start-over'; keepImage: boolean };

/** A drive the user may pick at all (an internal disk still needs its name typed). */
export function isSelectable(drive: DriveInfo): boolean {
  return refusalOf(drive.verdicts) === undefined;
}

/** Which drives the picker lists before "show all drives" is ticked: cards and sticks, and virtual drives if the setting says so. */
export function defaultVisibility(settings: Settings | null): DriveVisibility {
  return { showAll: false, showVirtual: settings?.showVirtual ?? false };
}

/** How many drives a person could choose without ticking "show all drives". */
/** Drives the picker shows with the current visibility settings. */
function shownDrives(state: Pick<FlowState, 'drives' | 'settings'>): DriveInfo[] {
  const visibility = defaultVisibility(state.settings);
  return state.drives.filter((d) => isDriveShown(d, visibility));
}

export function availableDrives(state: Pick<FlowState, 'drives' | 'settings'>): number {
  return shownDrives(state).filter((d) => isSelectable(d)).length;
}

/** Drives that can be copied (a clone): shown, and not the running system. The main process and the helper check again. */
export function copyableDrives(state: Pick<FlowState, 'drives' | 'settings'>): DriveInfo[] {
  return shownDrives(state).filter((d) => d.system !== 'running');
}

export function selectedDrives(state: Pick<FlowState, 'drives' | 'selected'>): DriveInfo[] {
  return state.selected.map((device) => state.drives.find((d) => d.device === device)).filter((d): d is DriveInfo => d !== undefined);
}

export function canFlash(state: FlowState): boolean {
  return state.settings !== null && state.image !== null && state.selected.length > 0 && state.flash === null;
}

/** Keeps only chosen drives that are still there and still allowed, and says which went away. */
function reconcileSelection(state: FlowState, drives: DriveInfo[]): Pick<FlowState, 'selected' | 'confirmedSystem' | 'driveNotice'> {
  const kept = state.selected.filter((device) => {
    const drive = drives.find((d) => d.device === device);
    return drive !== undefined && isSelectable(drive);
  });
  if (kept.length === state.selected.length) return { selected: state.selected, confirmedSystem: state.confirmedSystem, driveNotice: state.driveNotice };
  const lost = state.selected.filter((device) => !kept.includes(device));
  const gone = lost.map((device) => {
    const before = state.drives.find((d) => d.device === device);
    const now = drives.find((d) => d.device === device);
    const name = before === undefined ? device : `${driveName(before)} (${device})`;
    return now === undefined ? `${name} was removed` : `${name} can no longer be used for this image`;
  });
  return {
    selected: kept,
    confirmedSystem: state.confirmedSystem.filter((device) => kept.includes(device)),
    driveNotice: `${gone.join('; ')}.`,
  };
}

export function flowReducer(state: FlowState, action: FlowAction): FlowState {
  switch (action.type) {
    case 'settings':
      return { ...state, settings: action.settings };
    case 'image-busy':
      return { ...state, imageBusy: true, imageError: null };
    case 'image-chosen':
      return { ...state, image: action.image, imageBusy: false, imageError: null, startError: null };
    case 'image-dialog-closed':
      return { ...state, imageBusy: false };
    case 'image-error':
      return { ...state, imageBusy: false, imageError: action.message };
    case 'image-cleared':
      return { ...state, image: null, imageError: null, startError: null };
    case 'image-opened': {
      // Mid-flash the main process refuses it: said on the progress screen, the flash goes on untouched.
      if (state.flash !== null && !action.result.ok) return { ...state, flash: { ...state.flash, notice: action.result.error.message } };
      // Opening an image is asking for a new flash: from the end screen, back to the steps, as "Flash another drive" does.
      const steps = state.finished === null ? state : flowReducer(state, { type: 'start-over', keepImage: true });
      return action.result.ok ? flowReducer(steps, { type: 'image-chosen', image: action.result.value }) : flowReducer(steps, { type: 'image-error', message: action.result.error.message });
    }
    case 'drives':
      return { ...state, drives: action.drives, ...reconcileSelection(state, action.drives) };
    case 'select':
      return { ...state, selected: action.devices, confirmedSystem: action.confirmedSystem, driveNotice: null, startError: null };
    case 'flash-starting': {
      if (state.image === null || state.settings === null) return state;
      const targets = selectedDrives(state);
      return { ...state, startError: null, finished: null, flash: { image: state.image, targets, verify: state.settings.verify, progress: {}, cancelling: false, notice: null } };
    }
    case 'flash-refused':
      return { ...state, flash: null, startError: action.message };
    case 'progress':
      if (state.flash === null) return state;
      return { ...state, flash: { ...state.flash, progress: { ...state.flash.progress, [action.progress.target]: action.progress } } };
    case 'cancelling':
      return state.flash === null ? state : { ...state, flash: { ...state.flash, cancelling: true } };
    case 'flash-ended':
      if (state.flash === null) return state;
      return { ...state, flash: null, finished: { image: state.flash.image, targets: state.flash.targets, end: action.end } };
    case 'start-over':
      return {
        ...state,
        finished: null,
        selected: [],
        confirmedSystem: [],
        driveNotice: null,
        startError: null,
        image: action.keepImage ? state.image : null,
      };
  }
}
