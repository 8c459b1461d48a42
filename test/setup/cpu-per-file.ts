/**
 * With SLUICE_CPU_LOG set, appends to that file one line per test file: the CPU seconds its fork
 * and the processes it waited for spent (QEMU guests, the CLI, the helper, mkfs…), and the fork's
 * wall seconds. CI's time is CPU-bound on two cores, so this, not the wall time vitest prints
 * (which a busy neighbour inflates), says which file costs the run what.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { afterAll, expect } from 'vitest';

const log = process.env['SLUICE_CPU_LOG'];
/** Clock ticks per second of /proc's times (USER_HZ, 100 on every Linux build). */
const TICKS = 100;

/** utime + stime + cutime + cstime of this process, in seconds (proc(5): fields 14 to 17). */
function cpuSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields.slice(11, 15).reduce((sum, field) => sum + Number(field), 0) / TICKS;
}

// Each test file runs in a fork of its own (pool 'forks', isolated), so the fork's whole life is
// the file's cost: its start, imports, tests and hooks.
if (log !== undefined && process.platform === 'linux')
  afterAll(() => {
    const file = relative(process.cwd(), expect.getState().testPath ?? '');
    appendFileSync(log, `${cpuSeconds().toFixed(1)}\t${process.uptime().toFixed(1)}\t${file}\n`);
  });
