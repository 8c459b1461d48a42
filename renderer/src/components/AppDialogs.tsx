import type { Dispatch } from 'react';
import type { SluiceApi } from '../../../common/contracts/ipc-contract.js';
import type { DriveInfo } from '../../../common/contracts/app-models.js';
import { defaultVisibility, type Dialog, type FlowAction, type FlowState } from '../flow.js';
import type { JobActions } from '../job-actions.js';
import { BackupDialog } from './BackupDialog.js';
import { CheckDialog } from './CheckDialog.js';
import { ConfirmFlash } from './ConfirmFlash.js';
import { CustomiseDialog } from './CustomiseDialog.js';
import { DrivePicker } from './DrivePicker.js';
import { EraseDialog } from './EraseDialog.js';
import { OsPicker } from './OsPicker.js';
import { SettingsDialog } from './SettingsDialog.js';

interface AppDialogsProps {
  api: SluiceApi;
  state: FlowState;
  dispatch: Dispatch<FlowAction>;
  actions: JobActions;
  targets: DriveInfo[];
  cacheApi: { load: SluiceApi['getCache']; clear: SluiceApi['clearCache'] };
  onChooseOs: (source: string, path: string[]) => void;
}

/** The dialog open over the screen, if any. */
export function AppDialogs({ api, state, dispatch, actions, targets, cacheApi, onChooseOs }: AppDialogsProps) {
  const { dialog, confirmCustomisation, backupBusy, backupError } = state;
  const { openBackup, compare, startFlash, startErase, startCheck, startBackup, saveProfiles, updateSettings } =
    actions;
  const setDialog = (open: Dialog) => dispatch({ type: 'dialog', dialog: open });
  return (
    <>
      {dialog === 'drives' && (
        <DrivePicker
          drives={state.drives}
          visibility={defaultVisibility(state.settings)}
          selected={state.selected}
          confirmedSystem={state.confirmedSystem}
          onCancel={() => setDialog(null)}
          onBackup={openBackup}
          onCheck={(drive) => setDialog({ check: drive })}
          onErase={(drive) => setDialog({ erase: drive })}
          onCompare={(drive) => void compare(drive)}
          confirmDrive={(confirmation) => api.confirmDrive(confirmation)}
          onDone={(devices, confirmedSystem) => {
            dispatch({ type: 'select', devices, confirmedSystem });
            setDialog(null);
          }}
        />
      )}
      {dialog === 'confirm' && state.image !== null && targets.length > 0 && (
        <ConfirmFlash
          image={state.image}
          targets={targets}
          verify={state.settings?.verify ?? true}
          customisation={confirmCustomisation}
          onConfirm={startFlash}
          onCancel={() => setDialog(null)}
        />
      )}
      {typeof dialog === 'object' && dialog !== null && 'erase' in dialog && (
        <EraseDialog
          drive={dialog.erase}
          onStart={(label) => startErase(dialog.erase, label)}
          onCancel={() => setDialog(null)}
        />
      )}
      {typeof dialog === 'object' && dialog !== null && 'check' in dialog && (
        <CheckDialog drive={dialog.check} onStart={() => startCheck(dialog.check)} onCancel={() => setDialog(null)} />
      )}
      {typeof dialog === 'object' && dialog !== null && 'backup' in dialog && (
        <BackupDialog
          drive={state.drives.find((d) => d.device === dialog.backup.device) ?? dialog.backup}
          verify={state.settings?.verify ?? true}
          busy={backupBusy}
          error={backupError}
          onStart={(choices) => void startBackup(dialog.backup, choices)}
          onCancel={() => setDialog(null)}
          confirmDrive={(confirmation) => api.confirmDrive(confirmation)}
        />
      )}
      {dialog === 'customise' && state.image !== null && (
        <CustomiseDialog
          image={state.image}
          cards={Math.max(1, state.selected.length)}
          current={state.customise}
          profiles={state.settings?.profiles ?? []}
          api={api}
          onSaveProfiles={saveProfiles}
          onApply={(profile) => {
            dispatch({ type: 'customise', profile });
            setDialog(null);
          }}
          onCancel={() => setDialog(null)}
        />
      )}
      {dialog === 'settings' && state.settings !== null && (
        <SettingsDialog
          settings={state.settings}
          onChange={updateSettings}
          cache={cacheApi}
          onClose={() => setDialog(null)}
        />
      )}
      {dialog === 'os' && state.settings !== null && (
        <OsPicker
          repositories={state.settings.repositories}
          read={(source) => api.readCatalogue(source)}
          onChoose={onChooseOs}
          onClose={() => setDialog(null)}
        />
      )}
    </>
  );
}
