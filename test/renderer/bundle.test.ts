import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { expect, it } from 'vitest';
import { KiB } from '../../common/domain/units.js';

const ASSETS = resolve('out/ui/assets');
/** The budget for the renderer's JavaScript, gzipped. */
const JS_BUDGET_GZIP = 250 * KiB;

it(`the renderer's JavaScript stays under ${JS_BUDGET_GZIP / KiB} KB gzipped`, () => {
  const scripts = readdirSync(ASSETS).filter((name) => name.endsWith('.js'));
  expect(scripts.length).toBeGreaterThan(0);
  const gzipped = scripts.reduce(
    (sum, name) => sum + gzipSync(readFileSync(join(ASSETS, name)), { level: 9 }).length,
    0,
  );
  console.log(`renderer JS: ${scripts.length} file(s), ${(gzipped / KiB).toFixed(1)} KiB gzipped`);
  expect(gzipped).toBeLessThan(JS_BUDGET_GZIP);
});
