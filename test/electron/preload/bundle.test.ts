/**
 * The preload as Electron loads it with sandbox: true: one CommonJS file whose only `require` is
 * `electron`. Run here in a VM context with a recording stand-in for Electron's modules (the
 * Electron binary cannot be downloaded on this machine), to check what it exposes to the page.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { EVENT_CHANNELS, INVOKE_CHANNELS } from '../../../common/contracts/ipc-channels.js';
import type { SluiceApi } from '../../../common/contracts/ipc-contract.js';

const BUNDLE = resolve('out/electron/preload/preload.cjs');

function loadPreload() {
  const exposed = new Map<string, unknown>();
  const invoked: unknown[][] = [];
  const listeners = new Map<string, Set<(...args: unknown[]) => void>>();
  const required: string[] = [];
  const electron = {
    contextBridge: { exposeInMainWorld: (key: string, api: unknown) => exposed.set(key, api) },
    ipcRenderer: {
      invoke: async (...args: unknown[]) => void invoked.push(args),
      on: (channel: string, listener: (...args: unknown[]) => void) =>
        listeners.set(channel, (listeners.get(channel) ?? new Set()).add(listener)),
      removeListener: (channel: string, listener: (...args: unknown[]) => void) =>
        listeners.get(channel)?.delete(listener),
    },
    webUtils: { getPathForFile: (file: { name: string }) => `/home/user/Downloads/${file.name}` },
  };
  const require = (name: string) => {
    required.push(name);
    if (name !== 'electron') throw new Error(`a sandboxed preload cannot require ${name}`);
    return electron;
  };
  const module = { exports: {} };
  runInNewContext(readFileSync(BUNDLE, 'utf8'), { require, module, exports: module.exports });
  const send = (channel: string, payload: unknown) =>
    listeners.get(channel)?.forEach((l) => l({ sender: electron.ipcRenderer, senderId: 0 }, payload));
  return { api: exposed.get('sluice') as SluiceApi, exposed, invoked, listeners, required, send };
}

describe('the preload bundle', () => {
  it('is CommonJS that requires only electron', () => {
    const source = readFileSync(BUNDLE, 'utf8');
    expect(source).not.toMatch(/^\s*(import|export)\s/m);
    expect(loadPreload().required).toEqual(['electron']);
  });

  it('exposes window.sluice and nothing else: one function per capability', () => {
    const { api, exposed } = loadPreload();
    expect([...exposed.keys()]).toEqual(['sluice']);
    // One listener per push channel (onDrivesChanged for drivesChanged...): a merged branch's new
    // channel is expected without editing this list, and a channel the preload forgets fails here.
    const listeners = Object.keys(EVENT_CHANNELS).map((name) => `on${name[0]?.toUpperCase() ?? ''}${name.slice(1)}`);
    expect(Object.keys(api).sort()).toEqual([...Object.keys(INVOKE_CHANNELS), 'pathForFile', ...listeners].sort());
    expect(Object.values(api).every((f) => typeof f === 'function')).toBe(true);
  });

  it('sends each call on its own channel with exactly its arguments', async () => {
    const { api, invoked } = loadPreload();
    await api.selectImage('/home/user/os.img');
    await api.startFlash({ image: '/home/user/os.img', targets: ['/dev/sdb'] });
    await api.cancelJob();
    await api.pageReady();
    expect(invoked).toEqual([
      [INVOKE_CHANNELS.selectImage, '/home/user/os.img'],
      [INVOKE_CHANNELS.startFlash, { image: '/home/user/os.img', targets: ['/dev/sdb'] }],
      [INVOKE_CHANNELS.cancelJob],
      [INVOKE_CHANNELS.pageReady],
    ]);
    expect(api.pathForFile({ name: 'os.img' })).toBe('/home/user/Downloads/os.img');
  });

  it('hands listeners the payload only, never the IPC event (whose sender is ipcRenderer), and unsubscribes', () => {
    const { api, send, listeners } = loadPreload();
    const received: unknown[][] = [];
    const stop = api.onJobProgress((...args: unknown[]) => void received.push(args));
    send(EVENT_CHANNELS.jobProgress, { phase: 'writing' });
    expect(received).toEqual([[{ phase: 'writing' }]]);
    stop();
    send(EVENT_CHANNELS.jobProgress, { phase: 'verifying' });
    expect(received).toHaveLength(1);
    expect(listeners.get(EVENT_CHANNELS.jobProgress)?.size).toBe(0);

    const opened: unknown[][] = [];
    const stopOpened = api.onImageOpened((...args: unknown[]) => void opened.push(args));
    const refused = { ok: false, error: { code: 'busy', message: 'os.img was not opened: a flash is running.' } };
    send(EVENT_CHANNELS.imageOpened, refused);
    expect(opened).toEqual([[refused]]);
    stopOpened();
    expect(listeners.get(EVENT_CHANNELS.imageOpened)?.size).toBe(0);
  });
});
