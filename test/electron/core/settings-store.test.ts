import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS } from '../../../common/contracts/settings.js';
import { DEFAULT_REPOSITORY } from '../../../common/domain/catalogue.js';
import { SettingsStore } from '../../../electron/core/settings-store.js';

let dir: string;
let file: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sluice-settings-'));
  file = join(dir, 'userData', 'settings.json');
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

describe('settings in userData/settings.json', () => {
  it("start from the defaults: verify on, eject on, virtual drives hidden, notifications on, free space left out, no profiles, Raspberry Pi's catalogue, a 20 GB cache, capacity check on", async () => {
    const store = await SettingsStore.open(file);
    expect(store.get()).toEqual({
      verify: true,
      eject: true,
      showVirtual: false,
      notifications: true,
      exact: false,
      profiles: [],
      repositories: [DEFAULT_REPOSITORY],
      cacheLimitBytes: 20_000_000_000,
      capacityCheck: true,
    });
    expect(store.get()).toEqual(DEFAULT_SETTINGS);
    expect(store.problem).toBeNull();
    expect(existsSync(file)).toBe(false);
  });

  it('persist a change, readable only by the user, and read it back', async () => {
    const store = await SettingsStore.open(file);
    expect(await store.update({ verify: false })).toEqual({ ...DEFAULT_SETTINGS, verify: false });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ ...DEFAULT_SETTINGS, verify: false });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect((await SettingsStore.open(file)).get()).toEqual({ ...DEFAULT_SETTINGS, verify: false });
  });

  it('fall back field by field: one bad value does not reset the others', async () => {
    const store = await SettingsStore.open(file);
    await store.update({ eject: false });
    writeFileSync(file, JSON.stringify({ verify: 'yes', eject: false, showVirtual: true, fromTheFuture: 1 }));
    const reopened = await SettingsStore.open(file);
    expect(reopened.get()).toEqual({
      ...DEFAULT_SETTINGS,
      verify: true,
      eject: false,
      showVirtual: true,
      notifications: true,
    });
    expect(reopened.problem).toContain('"verify"');
  });

  it('keep a file that is not JSON as settings.json.invalid instead of overwriting it', async () => {
    const store = await SettingsStore.open(file);
    await store.update({ notifications: false });
    writeFileSync(file, '{ "verify": false,');
    const reopened = await SettingsStore.open(file);
    expect(reopened.get()).toEqual(DEFAULT_SETTINGS);
    expect(reopened.problem).toContain('settings.json.invalid');
    expect(readFileSync(`${file}.invalid`, 'utf8')).toBe('{ "verify": false,');
  });

  it('refuse a value the schema does not allow, and keep what was saved', async () => {
    const store = await SettingsStore.open(file);
    await expect(store.update({ verify: 'no' as unknown as boolean })).rejects.toThrow();
    expect(store.get()).toEqual(DEFAULT_SETTINGS);
  });

  it('keep repositories as http(s) addresses or full paths, and refuse anything else', async () => {
    const store = await SettingsStore.open(file);
    const repositories = ['https://example.org/os_list.json', '/srv/images/lab.rpi-imager-manifest'];
    expect((await store.update({ repositories })).repositories).toEqual(repositories);
    for (const bad of ['file:///etc/passwd', 'relative/list.json', 'javascript:alert(1)', '']) {
      await expect(store.update({ repositories: [bad] })).rejects.toThrow();
    }
    await expect(store.update({ cacheLimitBytes: -1 })).rejects.toThrow();
    expect((await SettingsStore.open(file)).get().repositories).toEqual(repositories);
  });
});
