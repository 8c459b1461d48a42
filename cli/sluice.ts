#!/usr/bin/env node
/**
 * The `sluice` command's entry. It runs on whatever `node` comes first on PATH, which may be older
 * than what Sluice uses (Debian 12's is 18, and a Node 20 decoder died on the missing
 * zlib.zstdDecompress). So this file imports only what every Node since 14 has, and before anything
 * else is loaded it makes sure the rest runs on Node MINIMUM_NODE_MAJOR or later: on this Node when
 * it is recent enough, else on the project's pinned Node (the `node` package a clone installs),
 * else it stops with one line.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MINIMUM_NODE_MAJOR } from './minimum-node.js';

/** Where a clone's `npm install` puts the pinned Node, relative to this file: out/run/sluice.js, the bundle package.json's bin names (out/cli/ is as deep). */
const PINNED_NODE = fileURLToPath(new URL('../../node_modules/node/bin/node', import.meta.url));

/** Set on the re-executed process, so that a pinned Node that is somehow old cannot loop. */
const REEXECUTED = 'SLUICE_PINNED_NODE';

function runOn(node: string): void {
  const child = spawn(node, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, [REEXECUTED]: '1' },
  });
  // Ctrl-C reaches both processes through the terminal: the child stops cleanly (its device
  // synced and closed) and this one waits for it. A signal sent to this process alone is passed on.
  process.on('SIGINT', () => undefined);
  for (const signal of ['SIGTERM', 'SIGHUP'] as const) process.on(signal, () => child.kill(signal));
  child.on('error', (error) => {
    process.stderr.write(`Sluice could not start Node ${PINNED_NODE}: ${error.message}\n`);
    process.exitCode = 1;
  });
  child.on('exit', (code, signal) => {
    if (signal === null) process.exitCode = code ?? 1;
    else {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    }
  });
}

/** Root started for someone (sudo, pkexec): cli/broker.ts runs the command line as them. */
const rootForSomeone = process.getuid?.() === 0 && (process.env.SUDO_UID ?? process.env.PKEXEC_UID) !== undefined;
/** Started by that broker: its channel must not keep this process alive (elevation/broker.ts holds it while a helper runs). */
if (process.env.SLUICE_BROKER === '1') process.channel?.unref();

const major = Number(process.versions.node.split('.')[0]);
if (major >= MINIMUM_NODE_MAJOR) await import(rootForSomeone ? './broker.js' : './main.js');
else if (process.env[REEXECUTED] === undefined && existsSync(PINNED_NODE)) runOn(PINNED_NODE);
else {
  process.stderr.write(`Sluice needs Node ${MINIMUM_NODE_MAJOR} or later; this is ${process.versions.node}.\n`);
  process.exitCode = 1;
}
