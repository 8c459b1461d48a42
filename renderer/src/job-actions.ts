import type { Dispatch } from 'react';
import type { ApiResult } from '../../common/contracts/api-result.js';
import type { DriveInfo } from '../../common/contracts/app-models.js';
import type { SluiceApi } from '../../common/contracts/ipc-contract.js';
import type { Settings } from '../../common/contracts/settings.js';
import type { Profile } from '../../common/domain/customisation.js';
import type { BackupChoices } from './components/BackupDialog.js';
import type { IsoMode } from './components/ConfirmFlash.js';
import type { Dialog, FlowAction, FlowState } from './flow.js';

/** What an action needs: the main process to ask, the state it starts from, and where it says the answer. */
interface ActionContext {
  api: SluiceApi;
  state: FlowState;
  dispatch: Dispatch<FlowAction>;
  setDialog: (dialog: Dialog) => void;
}

/** Flashing the chosen image onto the chosen cards, and what comes after the job. */
function flashActions({ api, state, dispatch, setDialog }: ActionContext) {
  const startFlash = (isoMode?: IsoMode) => {
    if (state.image === null) return;
    setDialog(null);
    dispatch({ type: 'flash-starting' });
    void api
      .startFlash({
        image: state.image.source,
        targets: state.selected,
        media: state.selected.map((device) => state.drives.find((d) => d.device === device)?.medium ?? null),
        customise: state.customise,
        ...(isoMode === undefined ? {} : { isoMode }),
      })
      .then((result) => !result.ok && dispatch({ type: 'flash-refused', message: result.error.message }));
  };

  /** The erase confirmation, with what the customisation writes onto these cards worked out first. */
  const openConfirm = () => {
    setDialog('confirm');
    if (state.customise === null) return dispatch({ type: 'confirm-customisation', preview: null });
    dispatch({ type: 'confirm-customisation', preview: undefined });
    void api
      .previewCustomisation(state.customise, state.selected.length)
      .then((preview) => dispatch({ type: 'confirm-customisation', preview }));
  };

  const cancelJob = () => {
    dispatch({ type: 'cancelling' });
    void api.cancelJob();
  };

  const startOver = (keepImage: boolean) => {
    dispatch({ type: 'start-over', keepImage });
    if (!keepImage) void api.clearImage();
  };

  return { startFlash, openConfirm, cancelJob, startOver };
}

/** The jobs the drive picker offers for one drive: back up, check, erase, compare. */
function driveActions({ api, dispatch, setDialog }: ActionContext) {
  /** A job the main process would not start leaves the steps screen with its reason. */
  const refused = (result: ApiResult<unknown>) => {
    if (!result.ok) dispatch({ type: 'flash-refused', message: result.error.message });
  };

  const openBackup = (drive: DriveInfo) => {
    dispatch({ type: 'backup-dialog', busy: false, error: null });
    setDialog({ backup: drive });
  };

  const startBackup = async (drive: DriveInfo, { compress, trimToPartitions, shrink }: BackupChoices) => {
    dispatch({ type: 'backup-dialog', busy: true, error: null });
    const chosen = await api.chooseBackupFile(drive.device, compress);
    dispatch({ type: 'backup-dialog', busy: false, error: chosen.ok ? null : chosen.error.message });
    if (!chosen.ok) return;
    if (chosen.value === null) return;
    setDialog(null);
    // The progress screen first, as for a flash: the job's events may arrive before the answer does.
    dispatch({ type: 'backup-starting', drive, file: chosen.value });
    const started = await api.startBackup({
      device: drive.device,
      file: chosen.value,
      compress,
      trimToPartitions,
      shrink,
    });
    if (!started.ok) {
      dispatch({ type: 'backup-refused' });
      dispatch({ type: 'backup-dialog', busy: false, error: started.error.message });
      setDialog({ backup: drive });
    }
  };

  const startCheck = (drive: DriveInfo) => {
    setDialog(null);
    dispatch({ type: 'check-starting', drive });
    void api.startCheck(drive.device, drive.medium).then(refused);
  };

  const startErase = (drive: DriveInfo, label: string | null) => {
    setDialog(null);
    dispatch({ type: 'erase-starting', drive });
    void api.startErase({ device: drive.device, medium: drive.medium, label }).then(refused);
  };

  const compare = async (drive: DriveInfo) => {
    setDialog(null);
    const chosen = await api.chooseCompareImage(drive.device);
    if (!chosen.ok) return dispatch({ type: 'flash-refused', message: chosen.error.message });
    if (chosen.value === null) return;
    dispatch({ type: 'compare-starting', drive, image: chosen.value });
    refused(await api.startCompare(drive.device));
  };

  return { openBackup, startBackup, startCheck, startErase, compare };
}

/** Settings and saved profiles: the main process keeps them, the reducer shows what it kept. */
function settingsActions({ api, dispatch }: ActionContext) {
  const updateSettings = async (patch: Partial<Settings>): Promise<string | null> => {
    const result = await api.updateSettings(patch);
    if (!result.ok) return result.error.message;
    dispatch({ type: 'settings', settings: result.value });
    return null;
  };
  const saveProfiles = (profiles: Profile[]) => updateSettings({ profiles });
  return { updateSettings, saveProfiles };
}

/** What the screen's buttons start: each asks the main process, and says the answer through the reducer. */
export function jobActions(api: SluiceApi, state: FlowState, dispatch: Dispatch<FlowAction>) {
  const context: ActionContext = { api, state, dispatch, setDialog: (dialog) => dispatch({ type: 'dialog', dialog }) };
  return { ...flashActions(context), ...driveActions(context), ...settingsActions(context) };
}

export type JobActions = ReturnType<typeof jobActions>;
