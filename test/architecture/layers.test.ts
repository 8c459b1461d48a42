/**
 * The layer table in eslint.config.js refuses what it must: each row below is an import that would
 * put a parser in root, Node in the renderer, or the app's insides in the helper, linted as if it
 * were written in that file.
 */
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint();

async function refusals(file: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath: file });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'sluice/layers').map((m) => m.message);
}

describe('the layer table', () => {
  it.each([
    ['writer/flash.ts', "import { prepareImage } from '../user/images/probe/probe.js';"],
    ['writer/flash.ts', "import { startHelper } from '../user/launcher/launch.js';"],
    ['privileged/main.ts', "import { prepareImage } from '../user/images/probe/probe.js';"],
    ['privileged/main.ts', "import { Zip } from 'yauzl';"],
    ['writer/flash.ts', "import { Udif } from '@balena/udif';"],
    ['node/io.ts', "import { flash } from '../writer/flash.js';"],
    ['common/domain/units.ts', "import { readFile } from 'node:fs';"],
    ['common/domain/units.ts', "import { flash } from '../../writer/flash.js';"],
    ['user/launcher/launch.ts', "import { watchParent } from '../../privileged/parent-watch.js';"],
    ['user/images/probe/probe.ts', "import { main } from '../../cli/main.js';"],
    ['renderer/src/App.tsx', "import { readFile } from 'node:fs';"],
    ['renderer/src/App.tsx', "import { ipcRenderer } from 'electron';"],
    ['renderer/src/App.tsx', "import { openFd } from '../../node/io.js';"],
    ['electron/core/app-service.ts', "import { app } from 'electron';"],
    ['electron/core/app-service.ts', "import { createMainWindow } from '../main/window.js';"],
    ['writer/platform/index.ts', "export async function load() { return import('../../user/images/probe/probe.js'); }"],
    ['privileged/main.ts', "export * from '../user/launcher/launch.js';"],
    ['user/customise/fat.ts', "import { readXzIndex } from '../images/formats/xz-index.js';"],
    ['user/images/probe/probe.ts', "import type { Station } from '../../station/station.js';"],
    ['user/cache/image-cache.ts', "import { startHelper } from '../launcher/launch.js';"],
  ])('refuses, in %s: %s', async (file, source) => {
    expect(await refusals(file, source)).not.toEqual([]);
  });

  it.each([
    [
      'writer/flash.ts',
      "import { readFully } from '../node/io.js';\nimport * as v from 'valibot';\nimport { open } from 'node:fs';",
    ],
    ['privileged/main.ts', "import { flash } from '../writer/flash.js';"],
    ['user/backup/backup-file.ts', "import { pump } from '../../writer/pump.js';"],
    ['user/images/probe/probe.ts', "import { customisationOf } from '../../customise/prepare.js';"],
    ['user/station/flash-card.ts', "import { feedSource } from '../images/feed/source-feed.js';"],
    ['cli/commands/flash.ts', "import { prepareImage } from '../../user/images/probe/probe.js';"],
    [
      'electron/main/main.ts',
      "import { app } from 'electron';\nimport { createAppService } from '../core/app-service.js';",
    ],
    ['electron/core/app-service.ts', "import type { BrowserWindow } from 'electron';"],
    ['renderer/src/App.tsx', "import type { DriveInfo } from '../../common/contracts/app-models.js';"],
  ])('allows, in %s: %s', async (file, source) => {
    expect(await refusals(file, source)).toEqual([]);
  });
});
