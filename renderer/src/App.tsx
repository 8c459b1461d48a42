import { useCallback, useEffect, useMemo, useReducer } from 'react';
import type { ApiResult } from '../../common/contracts/api-result.js';
import type { SluiceApi } from '../../common/contracts/ipc-contract.js';
import type { ImageInfo } from '../../common/domain/image.js';
import type { BackupRequest, DriveInfo } from '../../common/contracts/app-models.js';
import type { Settings } from '../../common/contracts/settings.js';
import { BackupDialog } from './components/BackupDialog.js';
import { CheckDialog } from './components/CheckDialog.js';
import { EraseDialog } from './components/EraseDialog.js';
import { ConfirmFlash, type IsoMode } from './components/ConfirmFlash.js';
import { CustomiseDialog } from './components/CustomiseDialog.js';
import type { Profile } from '../../common/domain/customisation.js';
import { DrivePicker } from './components/DrivePicker.js';
import { DriveStep } from './components/DriveStep.js';
import { EndScreen } from './components/EndScreen.js';
import { FlashStep } from './components/FlashStep.js';
import { GearIcon, ImageIcon } from './components/Icons.js';
import { ImageStep } from './components/ImageStep.js';
import { OsPicker } from './components/OsPicker.js';
import { ProgressView } from './components/ProgressView.js';
import { SettingsDialog } from './components/SettingsDialog.js';
import { StationScreen } from './components/StationScreen.js';
import {
  availableDrives,
  canFlash,
  copyableDrives,
  defaultVisibility,
  flowReducer,
  INITIAL_STATE,
  selectedDrives,
  type Dialog,
} from './flow.js';
import { useFileDrop } from './use-file-drop.js';
import { ErrorMessage } from './components/ErrorMessage.js';

export function App({ api }: { api: SluiceApi }) {
  const [state, dispatch] = useReducer(flowReducer, INITIAL_STATE);
  const { dialog, loadError, backupBusy, backupError, confirmCustomisation, station } = state;
  const setDialog = useCallback((open: Dialog) => dispatch({ type: 'dialog', dialog: open }), []);

  useEffect(() => {
    const unsubscribe = [
      api.onDrivesChanged((drives) => dispatch({ type: 'drives', drives })),
      api.onJobProgress((progress) => dispatch({ type: 'progress', progress })),
      api.onJobEnd((end) => {
        dispatch({ type: 'job-ended', end });
        // A saved profile's {n} moved on in the main process: show it.
        void api.getSettings().then((result) => result.ok && dispatch({ type: 'settings', settings: result.value }));
      }),
      api.onImageOpened((result) => dispatch({ type: 'image-opened', result })),
      api.onDownload((download) => dispatch({ type: 'download', download })),
    ];
    // Only now, with every listener in place: an image handed over at start arrives in answer to this.
    void api.pageReady();
    void api
      .getSettings()
      .then((result) =>
        dispatch(
          result.ok
            ? { type: 'settings', settings: result.value }
            : { type: 'load-error', message: result.error.message },
        ),
      );
    void api.listDrives().then((result) => result.ok && dispatch({ type: 'drives', drives: result.value }));
    return () => unsubscribe.forEach((stop) => stop());
  }, [api]);

  const imageChosen = useCallback((result: ApiResult<ImageInfo | null>) => {
    if (!result.ok) dispatch({ type: 'image-error', message: result.error.message });
    else if (result.value === null) dispatch({ type: 'image-dialog-closed' });
    else dispatch({ type: 'image-chosen', image: result.value });
  }, []);

  const chooseImage = useCallback(() => {
    dispatch({ type: 'image-busy' });
    void api.chooseImage().then(imageChosen);
  }, [api, imageChosen]);

  const openImageUrl = useCallback(
    (url: string) => {
      dispatch({ type: 'image-busy' });
      void api.openImageUrl(url).then(imageChosen);
    },
    [api, imageChosen],
  );

  const chooseCatalogueOs = useCallback(
    (source: string, path: string[]) => {
      setDialog(null);
      dispatch({ type: 'image-busy' });
      void api.chooseCatalogueOs(source, path).then(imageChosen);
    },
    [api, imageChosen, setDialog],
  );

  const chooseSourceDrive = useCallback(
    (device: string) => {
      dispatch({ type: 'image-busy' });
      void api.chooseSourceDrive(device).then(imageChosen);
    },
    [api, imageChosen],
  );

  const dropFile = useCallback(
    (file: File) => {
      const path = api.pathForFile(file);
      if (path === '') {
        dispatch({
          type: 'image-error',
          message: `${file.name} has no place on disk (was it dragged from a web page?). Save it to a folder first, then drop it from there.`,
        });
        return;
      }
      dispatch({ type: 'image-busy' });
      void api.selectImage(path).then(imageChosen);
    },
    [api, imageChosen],
  );
  const dragging = useFileDrop(!station && state.running === null && state.finished === null, dropFile);

  const clearImage = () => {
    dispatch({ type: 'image-cleared' });
    void api.clearImage();
  };

  const startFlash = (isoMode?: IsoMode) => {
    if (state.image === null) return;
    setDialog(null);
    dispatch({ type: 'flash-starting' });
    void api
      .startFlash({
        image: state.image.source,
        targets: state.selected,
        media: state.selected.map((device) => state.drives.find((d) => d.device === device)?.medium ?? null),
        confirmedSystemDrives: state.confirmedSystem,
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

  const saveProfiles = (profiles: Profile[]) => updateSettings({ profiles });

  const openBackup = (drive: DriveInfo) => {
    dispatch({ type: 'backup-dialog', busy: false, error: null });
    setDialog({ backup: drive });
  };

  const startBackup = async (drive: DriveInfo, compress: BackupRequest['compress'], trimToPartitions: boolean) => {
    dispatch({ type: 'backup-dialog', busy: true, error: null });
    const chosen = await api.chooseBackupFile(drive.device, compress);
    dispatch({ type: 'backup-dialog', busy: false, error: chosen.ok ? null : chosen.error.message });
    if (!chosen.ok) return;
    if (chosen.value === null) return;
    setDialog(null);
    // The progress screen first, as for a flash: the job's events may arrive before the answer does.
    dispatch({ type: 'backup-starting', drive, file: chosen.value });
    const started = await api.startBackup({ device: drive.device, file: chosen.value, compress, trimToPartitions });
    if (!started.ok) {
      dispatch({ type: 'backup-refused' });
      dispatch({ type: 'backup-dialog', busy: false, error: started.error.message });
      setDialog({ backup: drive });
    }
  };

  const startProbe = (drive: DriveInfo) => {
    setDialog(null);
    dispatch({ type: 'probe-starting', drive });
    void api
      .startProbe(drive.device, drive.medium)
      .then((result) => !result.ok && dispatch({ type: 'flash-refused', message: result.error.message }));
  };

  const startErase = (drive: DriveInfo, label: string | null) => {
    setDialog(null);
    dispatch({ type: 'erase-starting', drive });
    void api
      .startErase({ device: drive.device, medium: drive.medium, label })
      .then((result) => !result.ok && dispatch({ type: 'flash-refused', message: result.error.message }));
  };

  const compare = async (drive: DriveInfo) => {
    setDialog(null);
    const chosen = await api.chooseCompareImage(drive.device);
    if (!chosen.ok) return dispatch({ type: 'flash-refused', message: chosen.error.message });
    if (chosen.value === null) return;
    dispatch({ type: 'compare-starting', drive, image: chosen.value });
    const started = await api.startCompare(drive.device);
    if (!started.ok) dispatch({ type: 'flash-refused', message: started.error.message });
  };

  const cancelJob = () => {
    dispatch({ type: 'cancelling' });
    void api.cancelJob();
  };

  const startOver = (keepImage: boolean) => {
    dispatch({ type: 'start-over', keepImage });
    if (!keepImage) void api.clearImage();
  };

  const updateSettings = async (patch: Partial<Settings>): Promise<string | null> => {
    const result = await api.updateSettings(patch);
    if (!result.ok) return result.error.message;
    dispatch({ type: 'settings', settings: result.value });
    return null;
  };

  const cacheApi = useMemo(() => ({ load: () => api.getCache(), clear: () => api.clearCache() }), [api]);
  const targets = selectedDrives(state);

  return (
    <div className="app">
      <header className="app-header">
        <h1>Sluice</h1>
        <button
          type="button"
          className="icon-button"
          aria-label="Settings"
          onClick={() => setDialog('settings')}
          disabled={state.settings === null}
        >
          <GearIcon />
        </button>
      </header>
      <main className="app-main">
        <ErrorMessage error={loadError} />
        {station && state.image !== null ? (
          <StationScreen api={api} image={state.image} onClose={() => dispatch({ type: 'station', open: false })} />
        ) : state.running !== null ? (
          <ProgressView job={state.running} onCancel={cancelJob} />
        ) : state.finished !== null ? (
          <EndScreen
            finished={state.finished}
            onFlashAgain={() => startOver(true)}
            onFlashAnother={() => startOver(false)}
            onDone={() => dispatch({ type: 'back-to-steps' })}
            onShowFile={() => void api.showBackupFile()}
            onOpenLink={(url) => void api.openExternal(url)}
          />
        ) : (
          <div className="steps" data-screen="steps">
            <ImageStep
              image={state.image}
              busy={state.imageBusy}
              error={state.imageError}
              onChoose={chooseImage}
              onOpenUrl={openImageUrl}
              onChooseOs={() => setDialog('os')}
              sourceDrives={copyableDrives(state)}
              onChooseSourceDrive={chooseSourceDrive}
              onClear={clearImage}
              customise={state.customise}
              onCustomise={() => setDialog('customise')}
            />
            <DriveStep
              selected={targets}
              available={availableDrives(state)}
              notice={state.driveNotice}
              onOpenPicker={() => setDialog('drives')}
            />
            <FlashStep
              ready={canFlash(state)}
              verify={state.settings?.verify ?? true}
              error={state.startError}
              onFlash={openConfirm}
              onOpenSettings={() => setDialog('settings')}
            />
            {state.image?.origin === 'file' && (
              <button type="button" className="link-button" onClick={() => dispatch({ type: 'station', open: true })}>
                Flashing station: write every card inserted…
              </button>
            )}
          </div>
        )}
      </main>
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
        <CheckDialog drive={dialog.check} onStart={() => startProbe(dialog.check)} onCancel={() => setDialog(null)} />
      )}
      {typeof dialog === 'object' && dialog !== null && 'backup' in dialog && (
        <BackupDialog
          drive={state.drives.find((d) => d.device === dialog.backup.device) ?? dialog.backup}
          verify={state.settings?.verify ?? true}
          busy={backupBusy}
          error={backupError}
          onStart={(compress, trim) => void startBackup(dialog.backup, compress, trim)}
          onCancel={() => setDialog(null)}
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
          onChoose={chooseCatalogueOs}
          onClose={() => setDialog(null)}
        />
      )}
      {dragging && (
        <div className="drop-overlay" aria-hidden="true">
          <ImageIcon className="drop-icon" />
          <p>Drop the image to choose it</p>
        </div>
      )}
    </div>
  );
}
