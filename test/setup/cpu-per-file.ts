/**
 * With SLUICE_CPU_LOG set, appends to that file one line per test file: the CPU seconds its worker
 * and the processes it waited for spent (QEMU guests, the CLI, the helper, mkfs…), and its wall
 * seconds. CI's time is CPU-bound on two cores, so this, not the wall time vitest prints (which a
 * busy neighbour inflates), says which file costs the run what.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';

const log = process.env['SLUICE_CPU_LOG'];
/** Clock ticks per second of /proc's times (USER_HZ, 100 on every Linux build). */
const TICKS = 100;

/** utime + stime + cutime + cstime of this process, in seconds (proc(5): fields 14 to 17). */
function cpuSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields.slice(11, 15).reduce((sum, field) => sum + Number(field), 0) / TICKS;
}

if (log !== undefined && process.platform === 'linux') {
  let cpu = 0;
  let wall = 0;
  beforeAll(() => {
    cpu = cpuSeconds();
    wall = performance.now();
  });
  afterAll(() => {
    const file = relative(process.cwd(), expect.getState().testPath ?? '');
    const spent = cpuSeconds() - cpu;
    appendFileSync(log, `${spent.toFixed(1)}\t${((performance.now() - wall) / 1000).toFixed(1)}\t${file}\n`);
  });
}
