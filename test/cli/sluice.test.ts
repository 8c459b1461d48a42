import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { MINIMUM_NODE_MAJOR } from '../../cli/minimum-node.js';

const SYSTEM_NODE = '/usr/bin/node';
const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

it('the oldest Node the command accepts is the pinned one, the Node the tests run on', () => {
  const pinned = (JSON.parse(readFileSync('package.json', 'utf8')) as { devDependencies: Record<string, string> })
    .devDependencies['node'];
  expect(pinned).toMatch(new RegExp(`^\\^${MINIMUM_NODE_MAJOR}\\.`));
  expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(MINIMUM_NODE_MAJOR);
});

it.runIf(process.platform === 'linux')(
  'an older Node with no pinned Node beside the command stops at once with one line',
  () => {
    const version = execFileSync(SYSTEM_NODE, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
    expect(Number(version.split('.')[0])).toBeLessThan(MINIMUM_NODE_MAJOR);
    // The bin as an installation without the pinned Node has it: no node_modules, none of the chunks it imports later.
    const root = mkdtempSync(join(tmpdir(), 'sluice-bin-'));
    dirs.push(root);
    mkdirSync(join(root, 'out/run'), { recursive: true });
    copyFileSync('out/run/sluice.js', join(root, 'out/run/sluice.js'));
    // What makes them ES modules in the installed package (a Node older than 20.19 detects no syntax).
    writeFileSync(join(root, 'package.json'), '{ "type": "module" }\n');
    const run = spawnSync(SYSTEM_NODE, [join(root, 'out/run/sluice.js'), 'list'], { encoding: 'utf8' });
    expect({ status: run.status, stdout: run.stdout, stderr: run.stderr }).toEqual({
      status: 1,
      stdout: '',
      stderr: `Sluice needs Node ${MINIMUM_NODE_MAJOR} or later; this is ${version}.\n`,
    });
  },
);

it.runIf(process.platform === 'linux')(
  'an older Node runs the command on the pinned Node, exit code and output passed through',
  () => {
    const run = spawnSync(SYSTEM_NODE, ['out/run/sluice.js', 'frobnicate'], { encoding: 'utf8' });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/unknown command "frobnicate"/);
  },
);
