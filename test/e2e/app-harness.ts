/**
 * Runs the built renderer in Debian's Chromium against the real main-process core through the test
 * bridge, with the real helper writing real loop devices. Everything a test flashes passes
 * assertTestTarget first, inside the helper launcher, before the helper can open it.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';
import type { SettingsPatch } from '../../common/contracts/settings.js';
import type { HelperLauncher } from '../../electron/core/flash-session.js';
import { jobDrives } from '../../common/contracts/helper-protocol.js';
import type * as HelperProgram from '../../user/launcher/helper-program.js';
import { builtStartHelper } from '../support/built-modules.js';
import { assertTestTarget } from '../support/cli.js';
import { startBridge, type Bridge } from './bridge/bridge-server.js';

export const CHROMIUM = '/usr/bin/chromium';
export const ARTIFACTS = resolve('test-artifacts/app');

/**
 * The helper launcher the app gets in tests: refuses any drive that is not a loop device this
 * test created, and optionally puts the helper into a blkio cgroup (a slow card).
 */
export async function testLauncher(cgroupDir?: string): Promise<HelperLauncher> {
  const startHelper = await builtStartHelper();
  const { builtHelperProgram } = (await import(resolve('out/user/launcher/helper-program.js'))) as typeof HelperProgram;
  return (options) => {
    const drives = jobDrives(options.job);
    [...drives.writes, ...(drives.reads === null ? [] : [drives.reads])].forEach(assertTestTarget);
    if (cgroupDir === undefined) return startHelper(options);
    // The helper joins the slow card's cgroup before it is the helper: a shell enters the group,
    // then becomes it, so not one byte escapes the throttle.
    const helper = builtHelperProgram();
    const program = {
      ...helper,
      file: '/bin/sh',
      args: ['-c', `echo $$ > '${cgroupDir}/cgroup.procs' && exec "$@"`, 'sh', helper.file, ...helper.args],
    };
    return startHelper({ ...options, program });
  };
}

export interface AppUnderTest {
  page: Page;
  bridge: Bridge;
  /** Console errors and CSP violations the page reported. */
  pageErrors: string[];
  screenshot(name: string): Promise<void>;
  close(): Promise<void>;
}

export interface OpenAppOptions {
  dropDir: string;
  settings?: SettingsPatch;
  cgroupDir?: string;
  colorScheme?: 'light' | 'dark';
  /** The app's cache folder; default: `cache` in dropDir. */
  cacheDir?: string;
  /**
   * The command line Sluice is started with, as a double-click on an image starts it on Windows
   * and Linux: handed to the core before the page loads, as electron/main/main.ts does at start.
   */
  startedWith?: { argv: string[]; workingDirectory: string };
}

export async function launchBrowser(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  // A fresh profile per run: nothing cached or remembered from earlier runs.
  const userDataDir = mkdtempSync(join(tmpdir(), 'sluice-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 960, height: 640 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

export async function openApp(context: BrowserContext, options: OpenAppOptions): Promise<AppUnderTest> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const bridge = await startBridge({
    uiDir: resolve('out/ui'),
    shimFile: resolve('out/test/e2e/bridge/page-shim.js'),
    dropDir: options.dropDir,
    settingsFile: join(options.dropDir, 'settings.json'),
    initialSettings: options.settings,
    launchHelper: await testLauncher(options.cgroupDir),
    cacheDir: options.cacheDir ?? join(options.dropDir, 'cache'),
  });
  if (options.startedWith !== undefined)
    bridge.handOff.openCommandLine(options.startedWith.argv, options.startedWith.workingDirectory);
  const page = await context.newPage();
  await page.emulateMedia({ colorScheme: options.colorScheme ?? 'light' });
  const pageErrors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text());
  });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await page.goto(bridge.url);
  await page.getByRole('heading', { name: 'Sluice' }).waitFor();
  return {
    page,
    bridge,
    pageErrors,
    screenshot: async (name) => void (await page.screenshot({ path: join(ARTIFACTS, `${name}.png`) })),
    close: async () => {
      await page.close();
      await bridge.close();
    },
  };
}

/** Reads the overall percent shown on the progress screen every 50 ms until `done` resolves. */
export function recordPercents(page: Page, done: Promise<unknown>): Promise<number[]> {
  const seen: number[] = [];
  let finished = false;
  void done.finally(() => (finished = true));
  return (async () => {
    while (!finished) {
      const text = await page
        .getByTestId('percent')
        .textContent({ timeout: 50 })
        .catch(() => null);
      const value = text === null ? NaN : parseInt(text, 10);
      if (!Number.isNaN(value) && seen[seen.length - 1] !== value) seen.push(value);
      await new Promise((r) => setTimeout(r, 50));
    }
    return seen;
  })();
}

/** Step 2: opens the picker, ticks exactly this loop device, and closes the picker. */
export async function chooseDrive(page: Page, device: string): Promise<void> {
  await page.getByRole('button', { name: 'Select target…' }).click();
  const row = page.locator(`li[data-device="${device}"]`);
  await row.waitFor();
  await row.getByRole('checkbox').check();
  await page.getByRole('button', { name: 'Select 1 drive' }).click();
}

/** Step 3: Flash!, then the erase confirmation. The launcher asserts the target again before the helper starts. */
export async function flashAfterConfirming(app: AppUnderTest, device: string, screenshot?: string): Promise<void> {
  assertTestTarget(device);
  await app.page.getByRole('button', { name: 'Flash!' }).click();
  const dialog = app.page.getByRole('dialog', { name: 'Erase this drive?' });
  await dialog.waitFor();
  await expect(dialog.textContent()).resolves.toContain(device);
  if (screenshot !== undefined) await app.screenshot(screenshot);
  await dialog.getByRole('button', { name: 'Erase and flash' }).click();
}

export function endScreen(page: Page, tone: 'success' | 'unverified' | 'cancelled' | 'failure') {
  return page.locator(`section[data-screen="${tone}"]`);
}
