/**
 * How long the helper takes to start, against the runtime's own floor: `node --version`
 * (process start, no JavaScript), `node -e 0` (an empty script), and the real helper spawned the
 * way launch.ts spawns it, timed until its `ready` message arrives. Numbers go in build/HELPER.md.
 *
 *   npm run build && node out/build/scripts/helper-startup.js [runs]
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { startHelper } from '../../user/launcher/launch.js';

const runs = Number(process.argv[2] ?? 20);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

function timeCommand(args: string[]): number {
  const started = performance.now();
  spawnSync(process.execPath, args, { stdio: 'ignore' });
  return performance.now() - started;
}

async function timeHelper(): Promise<number> {
  // No target is ever opened: the job message names a path that does not exist.
  const image = openSync('/dev/null', 'r');
  const started = performance.now();
  const job = startHelper({
    source: image,
    job: {
      kind: 'flash',
      targets: ['/nonexistent/sluice-startup-probe'],
      imageSize: 0,
      sourceSeekable: true,
      verify: false,
    },
  });
  await job.ready;
  const elapsed = performance.now() - started;
  await job.result;
  closeSync(image);
  return elapsed;
}

async function timeSpawnOnly(): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, ['--version'], { stdio: 'ignore' });
  await new Promise((resolve) => child.on('close', resolve));
  return performance.now() - started;
}

const version = [];
const empty = [];
const helper = [];
const asyncVersion = [];
for (let i = 0; i < runs; i++) {
  version.push(timeCommand(['--version']));
  empty.push(timeCommand(['-e', '0']));
  asyncVersion.push(await timeSpawnOnly());
  helper.push(await timeHelper());
}
console.log(`${process.execPath} ${process.version}, ${runs} runs, median ms:`);
console.log(`  node --version (spawnSync)       ${median(version).toFixed(1)}`);
console.log(`  node --version (spawn, async)    ${median(asyncVersion).toFixed(1)}`);
console.log(`  node -e 0                        ${median(empty).toFixed(1)}`);
console.log(`  helper spawn → ready message     ${median(helper).toFixed(1)}`);
