import { useCallback, type Dispatch } from 'react';
import type { ApiResult } from '../../common/contracts/api-result.js';
import type { SluiceApi } from '../../common/contracts/ipc-contract.js';
import type { ImageInfo } from '../../common/domain/image.js';
import type { FlowAction } from './flow.js';

/** The ways of choosing the image (a file, a URL, the catalogue, a drive, a drop) and of letting it go. */
export function useImageChoice(api: SluiceApi, dispatch: Dispatch<FlowAction>) {
  const imageChosen = useCallback(
    (result: ApiResult<ImageInfo | null>) => {
      if (!result.ok) dispatch({ type: 'image-error', message: result.error.message });
      else if (result.value === null) dispatch({ type: 'image-dialog-closed' });
      else dispatch({ type: 'image-chosen', image: result.value });
    },
    [dispatch],
  );

  const chooseImage = useCallback(() => {
    dispatch({ type: 'image-busy' });
    void api.chooseImage().then(imageChosen);
  }, [api, dispatch, imageChosen]);

  const openImageUrl = useCallback(
    (url: string) => {
      dispatch({ type: 'image-busy' });
      void api.openImageUrl(url).then(imageChosen);
    },
    [api, dispatch, imageChosen],
  );

  const chooseCatalogueOs = useCallback(
    (source: string, path: string[]) => {
      dispatch({ type: 'dialog', dialog: null });
      dispatch({ type: 'image-busy' });
      void api.chooseCatalogueOs(source, path).then(imageChosen);
    },
    [api, dispatch, imageChosen],
  );

  const chooseSourceDrive = useCallback(
    (device: string) => {
      dispatch({ type: 'image-busy' });
      void api.chooseSourceDrive(device).then(imageChosen);
    },
    [api, dispatch, imageChosen],
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
    [api, dispatch, imageChosen],
  );
  const clearImage = useCallback(() => {
    dispatch({ type: 'image-cleared' });
    void api.clearImage();
  }, [api, dispatch]);

  return { chooseImage, openImageUrl, chooseCatalogueOs, chooseSourceDrive, dropFile, clearImage };
}
