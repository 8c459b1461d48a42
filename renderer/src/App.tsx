import { useCallback, useEffect, useMemo, useReducer } from 'react';
import type { SluiceApi } from '../../common/contracts/ipc-contract.js';
import { AppDialogs } from './components/AppDialogs.js';
import { DriveStep } from './components/DriveStep.js';
import { EndScreen } from './components/EndScreen.js';
import { ErrorMessage } from './components/ErrorMessage.js';
import { FlashStep } from './components/FlashStep.js';
import { GearIcon, ImageIcon } from './components/Icons.js';
import { ImageStep } from './components/ImageStep.js';
import { ProgressView } from './components/ProgressView.js';
import { StationScreen } from './components/StationScreen.js';
import {
  availableDrives,
  canFlash,
  copyableDrives,
  flowReducer,
  INITIAL_STATE,
  selectedDrives,
  type Dialog,
} from './flow.js';
import { jobActions } from './job-actions.js';
import { useFileDrop } from './use-file-drop.js';
import { useImageChoice } from './use-image-choice.js';

export function App({ api }: { api: SluiceApi }) {
  const [state, dispatch] = useReducer(flowReducer, INITIAL_STATE);
  const { loadError, station } = state;
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

  const { chooseImage, openImageUrl, chooseCatalogueOs, chooseSourceDrive, dropFile, clearImage } = useImageChoice(
    api,
    dispatch,
  );
  const dragging = useFileDrop(!station && state.running === null && state.finished === null, dropFile);

  const actions = jobActions(api, state, dispatch);
  const { openConfirm, cancelJob, startOver } = actions;

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
      <AppDialogs
        api={api}
        state={state}
        dispatch={dispatch}
        actions={actions}
        targets={targets}
        cacheApi={cacheApi}
        onChooseOs={chooseCatalogueOs}
      />
      {dragging && (
        <div className="drop-overlay" aria-hidden="true">
          <ImageIcon className="drop-icon" />
          <p>Drop the image to choose it</p>
        </div>
      )}
    </div>
  );
}
