import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isCatalogueIconPath, readCatalogueIcon } from '../../../electron/core/catalogue-icons.js';
import { iconFileName } from '../../../user/catalogue/icon-files.js';
import { tinyPng } from '../../support/catalogue.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-icons-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('catalogue icons served to the window', () => {
  it('serves a kept PNG with the type its bytes say', async () => {
    const name = iconFileName('https://x/icon.png');
    writeFileSync(join(dir, name), tinyPng([1, 2, 3]));
    expect(isCatalogueIconPath(`/catalogue-icon/${name}`)).toBe(true);
    expect(isCatalogueIconPath('/index.html')).toBe(false);
    await expect(readCatalogueIcon(dir, `/catalogue-icon/${name}`)).resolves.toMatchObject({
      contentType: 'image/png',
    });
  });

  it('serves nothing that is not a kept image: other names, HTML, SVG, a large file, a path out of the folder', async () => {
    const html = iconFileName('https://x/page');
    writeFileSync(join(dir, html), '<html><script>alert(1)</script></html>');
    const svg = iconFileName('https://x/icon.svg');
    writeFileSync(join(dir, svg), '<svg xmlns="http://www.w3.org/2000/svg"></svg>');
    const large = iconFileName('https://x/large.png');
    writeFileSync(join(dir, large), Buffer.concat([tinyPng([1, 2, 3]), Buffer.alloc(300 * 1024)]));
    writeFileSync(join(dir, 'settings.json'), tinyPng([1, 2, 3]));
    for (const name of [html, svg, large, 'settings.json', `../${html}`, `${html.slice(0, 63)}%2F`]) {
      await expect(readCatalogueIcon(dir, `/catalogue-icon/${name}`), name).resolves.toBeNull();
    }
  });
});
