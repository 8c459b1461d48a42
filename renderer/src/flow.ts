/**
 * The app's screen state and every way it can change, as one pure reducer: what the page shows
 * follows from this state alone, and the transitions are testable without a browser.
 */
import { isDriveShown, refusalOf, type DriveVisibility } from '../../common/domain/verdict.js';
import type { ApiResult } from '../../common/contracts/api-result.js';
import type { Progress } from '../../common/domain/progress.js';
import type { ImageInfo } from '../../common/domain/image.js';
import type { DriveInfo, JobEnd } from '../../common/contracts/app-models.js';
import type { DownloadProgress } from '../../common/contracts/ipc-contract.js';
import type { Settings } from '../../common/contracts/settings.js';
import { nextCardAfter, type Profile } from '../../common/domain/customisation.js';
import type { CustomisationPreview } from '../../common/contracts/customise.js';
import { driveName } from './labels.js';

/**
 * What a job works on: an image (a flash) or a drive (a clone) written to drives, as they were
 * when it started (the live list may lose them mid-write), or a drive saved into a file (a backup).
 */
export type JobSubject =
  | { kind: 'flash' | 'clone'; image: ImageInfo; targets: DriveInfo[] }
  | { kind: 'backup'; drive: DriveInfo; file: string }
  /** A drive checked for fake capacity (nothing of it is lost), or erased back to one empty partition. */
  | { kind: 'check'; drive: DriveInfo }
  | { kind: 'erase'; drive: DriveInfo }
  /** A drive compared with an image it should hold, nothing written. */
  | { kind: 'verify'; drive: DriveInfo; image: ImageInfo };

/** One line per thing being written, as progress and results are keyed: a drive's device, or the backup file's path. */
export interface JobRow {
  key: string;
  name: string;
  detail: string;
}

/** The last part of a path, whichever separator the system uses. */
export function fileName(path: string): string {
  return path.split(/[\\/]/).pop() ?? path;
}

export function jobRows(subject: JobSubject): JobRow[] {
  if (subject.kind === 'check' || subject.kind === 'erase' || subject.kind === 'verify')
    return [{ key: subject.drive.device, name: driveName(subject.drive), detail: subject.drive.device }];
  if (subject.kind !== 'backup')
    return subject.targets.map((t) => ({ key: t.device, name: driveName(t), detail: t.device }));
  return [{ key: subject.file, name: fileName(subject.file), detail: subject.file }];
}

export interface RunningJob {
  subject: JobSubject;
  verify: boolean;
  /** Latest report per target device. */
  progress: Record<string, Progress>;
  /** The helper has been asked to stop and has not answered yet. */
  cancelling: boolean;
  /** Why an image the system handed over meanwhile was not opened. */
  notice: string | null;
  /** The image's download, when it is downloaded while it is written. */
  download: DownloadProgress | null;
}

export interface FinishedJob {
  subject: JobSubject;
  end: JobEnd;
}

/** The dialog open over the screen, with the drive it is about. */
export type Dialog =
  | 'drives'
  | 'confirm'
  | 'settings'
  | 'customise'
  | 'os'
  | { backup: DriveInfo }
  | { check: DriveInfo }
  | { erase: DriveInfo }
  | null;

export interface FlowState {
  settings: Settings | null;
  image: ImageInfo | null;
  /** A dialog or check is under way. */
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
  running: RunningJob | null;
  finished: FinishedJob | null;
  /** The customisation the next flash writes onto each card; null: none. */
  customise: Profile | null;
  dialog: Dialog;
  /** Why the settings could not be read at start. */
  loadError: string | null;
  /** The backup dialog's own state: waiting for the save dialog, or why the backup could not start. */
  backupBusy: boolean;
  backupError: string | null;
  /** What the erase confirmation says the customisation writes: undefined while it is worked out. */
  confirmCustomisation: ApiResult<CustomisationPreview> | null | undefined;
  /** The flashing station's screen is open. */
  station: boolean;
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
  running: null,
  finished: null,
  customise: null,
  dialog: null,
  loadError: null,
  backupBusy: false,
  backupError: null,
  confirmCustomisation: null,
  station: false,
};

export type FlowAction =
  | { type: 'settings'; settings: Settings }
  | { type: 'image-busy' }
  | { type: 'image-chosen'; image: ImageInfo }
  | { type: 'image-dialog-closed' }
  | { type: 'image-error'; message: string }
  | { type: 'image-cleared' }
  | { type: 'customise'; profile: Profile | null }
  /** An image the system handed over (double-click, "Open with", command line), as the main process chose it or refused it. */
  | { type: 'image-opened'; result: ApiResult<ImageInfo> }
  | { type: 'drives'; drives: DriveInfo[] }
  | { type: 'select'; devices: string[]; confirmedSystem: string[] }
  | { type: 'flash-starting' }
  /** A backup of `drive` into `file` (the path the save dialog returned) is being started. */
  | { type: 'backup-starting'; drive: DriveInfo; file: string }
  /** The backup did not start: back to the steps, where the backup dialog says why. */
  | { type: 'backup-refused' }
  /** `drive` is being checked for fake capacity; a refusal comes back as flash-refused does (said under the steps). */
  | { type: 'check-starting'; drive: DriveInfo }
  /** `drive` is being erased; a refusal comes back as flash-refused does. */
  | { type: 'erase-starting'; drive: DriveInfo }
  /** `drive` is being compared with `image`; a refusal comes back as flash-refused does. */
  | { type: 'compare-starting'; drive: DriveInfo; image: ImageInfo }
  | { type: 'flash-refused'; message: string }
  | { type: 'progress'; progress: Progress }
  | { type: 'download'; download: DownloadProgress }
  | { type: 'cancelling' }
  | { type: 'job-ended'; end: JobEnd }
  | { type: 'start-over'; keepImage: boolean }
  /** From a backup's end screen back to the steps, as they were. */
  | { type: 'back-to-steps' }
  | ScreenAction;

/** What is open around the flow: a dialog, the station's screen, and the dialogs' own answers. */
type ScreenAction =
  | { type: 'dialog'; dialog: Dialog }
  | { type: 'load-error'; message: string }
  | { type: 'backup-dialog'; busy: boolean; error: string | null }
  | { type: 'confirm-customisation'; preview: ApiResult<CustomisationPreview> | null | undefined }
  | { type: 'station'; open: boolean };

const SCREEN_ACTIONS: ReadonlySet<string> = new Set([
  'dialog',
  'load-error',
  'backup-dialog',
  'confirm-customisation',
  'station',
] satisfies ScreenAction['type'][]);

function isScreenAction(action: FlowAction): action is ScreenAction {
  return SCREEN_ACTIONS.has(action.type);
}

function screenReducer(state: FlowState, action: ScreenAction): FlowState {
  switch (action.type) {
    case 'dialog':
      return { ...state, dialog: action.dialog };
    case 'load-error':
      return { ...state, loadError: action.message };
    case 'backup-dialog':
      return { ...state, backupBusy: action.busy, backupError: action.error };
    case 'confirm-customisation':
      return { ...state, confirmCustomisation: action.preview };
    case 'station':
      return { ...state, station: action.open };
  }
}

/** A drive the user may pick at all (an internal disk still needs its name typed). */
export function isSelectable(drive: DriveInfo): boolean {
  return refusalOf(drive.verdicts) === undefined;
}

/** Which drives the picker lists before "show all drives" is ticked: cards and sticks, and virtual drives if the setting says so. */
export function defaultVisibility(settings: Settings | null): DriveVisibility {
  return { showAll: false, showVirtual: settings?.showVirtual ?? false };
}

/** Drives the picker shows with the current visibility settings. */
function shownDrives(state: Pick<FlowState, 'drives' | 'settings'>): DriveInfo[] {
  const visibility = defaultVisibility(state.settings);
  return state.drives.filter((d) => isDriveShown(d, visibility));
}

/** How many drives a person could choose without ticking "show all drives". */
export function availableDrives(state: Pick<FlowState, 'drives' | 'settings'>): number {
  return shownDrives(state).filter((d) => isSelectable(d)).length;
}

/** A drive that can be read whole (cloned or backed up): a medium in it, and not the running system. The main process and the helper check again. */
export function isCopyable(drive: DriveInfo): boolean {
  return drive.system !== 'running' && drive.size !== null && drive.size > 0;
}

/** A drive that can be checked for fake capacity or erased: a card or stick with a medium, writable. The main process and the helper check again. */
export function isCheckable(drive: DriveInfo): boolean {
  return drive.system === null && !drive.readOnly && drive.size !== null && drive.size > 0;
}

/** Drives that can be copied (a clone), among those the picker shows. */
export function copyableDrives(state: Pick<FlowState, 'drives' | 'settings'>): DriveInfo[] {
  return shownDrives(state).filter(isCopyable);
}

export function selectedDrives(state: Pick<FlowState, 'drives' | 'selected'>): DriveInfo[] {
  return state.selected
    .map((device) => state.drives.find((d) => d.device === device))
    .filter((d): d is DriveInfo => d !== undefined);
}

export function canFlash(state: FlowState): boolean {
  return state.settings !== null && state.image !== null && state.selected.length > 0 && state.running === null;
}

/**
 * Whether `now` is still the drive that was chosen as `before`: the same name is not enough, as a
 * name is reused at once for the next device (a card swapped into the same reader, a loop number
 * taken by another loop) and the choice must not move to it. Where the OS numbers media (Linux),
 * the medium tells; elsewhere the size does, and a loop's description (its backing file): a card's
 * description changes with its partition labels (after a flash), so it is not compared, and two
 * cards of one size swapped in one reader are not told apart there.
 */
function sameDrive(before: DriveInfo | undefined, now: DriveInfo | undefined): boolean {
  if (before === undefined || now === undefined || before.size !== now.size || before.medium !== now.medium)
    return false;
  return !before.virtual || before.description === now.description;
}

/** Keeps only chosen drives that are still there, the same drives, and still allowed, and says which went away. */
function reconcileSelection(
  state: FlowState,
  drives: DriveInfo[],
): Pick<FlowState, 'selected' | 'confirmedSystem' | 'driveNotice'> {
  const kept = state.selected.filter((device) => {
    const drive = drives.find((d) => d.device === device);
    return (
      drive !== undefined &&
      sameDrive(
        state.drives.find((d) => d.device === device),
        drive,
      ) &&
      isSelectable(drive)
    );
  });
  if (kept.length === state.selected.length)
    return { selected: state.selected, confirmedSystem: state.confirmedSystem, driveNotice: state.driveNotice };
  const lost = state.selected.filter((device) => !kept.includes(device));
  const gone = lost.map((device) => {
    const before = state.drives.find((d) => d.device === device);
    const now = drives.find((d) => d.device === device);
    const name = before === undefined ? device : `${driveName(before)} (${device})`;
    return !sameDrive(before, now) ? `${name} was removed` : `${name} can no longer be used for this image`;
  });
  return {
    selected: kept,
    confirmedSystem: state.confirmedSystem.filter((device) => kept.includes(device)),
    driveNotice: `${gone.join('; ')}.`,
  };
}

export function flowReducer(state: FlowState, action: FlowAction): FlowState {
  if (isScreenAction(action)) return screenReducer(state, action);
  switch (action.type) {
    case 'settings':
      return { ...state, settings: action.settings };
    case 'image-busy':
      return { ...state, imageBusy: true, imageError: null };
    case 'image-chosen':
      // An image found to take no customisation drops it: nothing is guessed, and the image step says why.
      return {
        ...state,
        image: action.image,
        imageBusy: false,
        imageError: null,
        startError: null,
        customise:
          action.image.customisation === null && action.image.customisationNote !== null ? null : state.customise,
      };
    case 'customise':
      return { ...state, customise: action.profile, startError: null };
    case 'image-dialog-closed':
      return { ...state, imageBusy: false };
    case 'image-error':
      return { ...state, imageBusy: false, imageError: action.message };
    case 'image-cleared':
      return { ...state, image: null, imageError: null, startError: null };
    case 'image-opened': {
      // Mid-flash the main process refuses it: said on the progress screen, the flash goes on untouched.
      if (state.running !== null && !action.result.ok)
        return { ...state, running: { ...state.running, notice: action.result.error.message } };
      // Opening an image is asking for a new flash: from the end screen, back to the steps, as "Flash another drive" does.
      const steps = state.finished === null ? state : flowReducer(state, { type: 'start-over', keepImage: true });
      return action.result.ok
        ? flowReducer(steps, { type: 'image-chosen', image: action.result.value })
        : flowReducer(steps, { type: 'image-error', message: action.result.error.message });
    }
    case 'drives':
      return { ...state, drives: action.drives, ...reconcileSelection(state, action.drives) };
    case 'select':
      return {
        ...state,
        selected: action.devices,
        confirmedSystem: action.confirmedSystem,
        driveNotice: null,
        startError: null,
      };
    case 'flash-starting': {
      if (state.image === null || state.settings === null) return state;
      return startJob(
        state,
        {
          kind: state.image.origin === 'drive' ? 'clone' : 'flash',
          image: state.image,
          targets: selectedDrives(state),
        },
        state.settings.verify,
      );
    }
    case 'backup-starting':
      // Shown even when the settings could not be loaded: the main process runs the backup regardless.
      return startJob(
        state,
        { kind: 'backup', drive: action.drive, file: action.file },
        state.settings?.verify ?? true,
      );
    case 'check-starting':
      return startJob(state, { kind: 'check', drive: action.drive }, true);
    case 'compare-starting':
      return startJob(state, { kind: 'verify', drive: action.drive, image: action.image }, true);
    case 'erase-starting':
      // The drive's contents are gone: it can no longer be a clone's source or hold the chosen image's flash as chosen.
      return startJob(state, { kind: 'erase', drive: action.drive }, true);
    case 'flash-refused':
      return { ...state, running: null, startError: action.message };
    case 'backup-refused':
      return { ...state, running: null };
    case 'progress':
      if (state.running === null) return state;
      return {
        ...state,
        running: {
          ...state.running,
          progress: { ...state.running.progress, [action.progress.target]: action.progress },
        },
      };
    case 'download':
      return state.running === null ? state : { ...state, running: { ...state.running, download: action.download } };
    case 'cancelling':
      return state.running === null ? state : { ...state, running: { ...state.running, cancelling: true } };
    case 'job-ended':
      if (state.running === null) return state;
      return {
        ...state,
        running: null,
        finished: { subject: state.running.subject, end: action.end },
        customise: countedOn(state.customise, action.end),
      };
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
    case 'back-to-steps':
      return { ...state, finished: null };
  }
}

/** The customisation with its {n} past the last card it customised. */
function countedOn(profile: Profile | null, end: JobEnd): Profile | null {
  return profile === null ? null : { ...profile, nextCard: nextCardAfter(profile.nextCard, end.results) };
}

function startJob(state: FlowState, subject: JobSubject, verify: boolean): FlowState {
  return {
    ...state,
    startError: null,
    finished: null,
    running: { subject, verify, progress: {}, cancelling: false, notice: null, download: null },
  };
}
