/// <reference types="vite/client" />
import type { SluiceApi } from '../../common/contracts/ipc-contract.js';

declare global {
  interface Window {
    /** Provided by the preload (electron/preload/preload.ts); the page has no other way out. */
    readonly sluice: SluiceApi;
  }
}
