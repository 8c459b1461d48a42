/**
 * The attacker of the symlink-swap races, two ways: a separate process that turns a symbolic link
 * from one target to the next as fast as it can, until stopped (raceLink), and a swap timed in
 * steps of a job under way in this process (swapAfterTurns). Each turn is atomic (a new link
 * renamed over the old one), so the link always exists and leads to one of the targets: the
 * test's own loop devices and files (a root-only file standing for /etc/shadow).
 */
import { spawn } from 'node:child_process';
import { renameSync, rmSync, symlinkSync } from 'node:fs';
import { waitForExit } from './processes.js';

const RACER = `
const fs = require('node:fs');
const [link, ...targets] = process.argv.slice(1);
const next = link + '.next';
for (let i = 0; ; i++) {
  fs.rmSync(next, { force: true });
  fs.symlinkSync(targets[i % targets.length], next);
  fs.renameSync(next, link);
}
`;

export interface LinkRacer {
  /** Stops the racer and waits until it is gone; the link then stays where it was. */
  stop(): Promise<void>;
}

/** Makes `link` lead to `targets[0]`, then keeps turning it through `targets` in another process. */
export function raceLink(link: string, targets: readonly string[]): LinkRacer {
  symlinkSync(targets[0] ?? '', link);
  const racer = spawn(process.execPath, ['-e', RACER, link, ...targets], { stdio: 'ignore' });
  return {
    stop: async () => {
      racer.kill('SIGKILL');
      await waitForExit(racer.pid ?? 0, 5000);
    },
  };
}

/** Points `link` at `target` at once, atomically (a new link renamed over the old one). */
export function pointLink(link: string, target: string): void {
  const next = `${link}.next`;
  rmSync(next, { force: true });
  symlinkSync(target, next);
  renameSync(next, link);
}

/**
 * Points `link` at `target` after `turns` turns of this process's event loop: a job under way in
 * this process gets that many of its steps (each file system call it awaits is about one turn) done
 * before the swap, so a run of increasing `turns` moves the swap through every gap between the
 * job's look at the link and its use of it.
 */
export async function swapAfterTurns(link: string, target: string, turns: number): Promise<void> {
  for (let turn = 0; turn < turns; turn++) await new Promise((resolve) => setImmediate(resolve));
  pointLink(link, target);
}
