/**
 * `sudo sluice …`: root runs the command line as the user who ran sudo (cli/broker.ts), so the
 * image is read, and the file written, as that user; only the helper (and the broker that starts
 * it) keep root. Here the CLI runs as root with the ids of the unprivileged test user in
 * SUDO_UID/SUDO_GID, as sudo sets them (test/cli/sudo-as-user.device.test.ts goes through sudo).
 */
import { spawn } from 'node:child_process';
import { chownSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { CLI, collect, resultsOf, type CliRun } from '../support/cli.js';
import { serve, type FileServer } from '../support/file-server.js';
import { cleanupLoops, isRoot, scratchDir } from '../support/loop-device.js';
import { osImage, sh } from '../support/os-image.js';
import { watchDescendants, type SeenProcess } from '../support/processes.js';
import { ensureTestUser, shareWithTestUser, TEST_USER } from '../support/unprivileged.js';

const isProbe = (argv: string[]) => argv.some((a) => a.endsWith('out/run/probe.js'));
const isDecoder = (argv: string[]) => argv.some((a) => a.endsWith('out/run/decoder.js'));

describe.skipIf(!isRoot)('sluice as root under sudo reads images as the user who ran sudo', () => {
  let user: { uid: number; gid: number };
  let dir: string;
  let sudoEnv: NodeJS.ProcessEnv;

  /** Runs the built CLI as root with `env`, watching which of its descendants run as whom. */
  async function cli(args: string[], env: NodeJS.ProcessEnv): Promise<{ run: CliRun; seen: SeenProcess[] }> {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
    const watch = watchDescendants(child.pid!, (argv) => isProbe(argv) || isDecoder(argv));
    const run = await collect(child);
    return { run, seen: [...watch.stop().values()] };
  }

  /** A scratch folder of the test user's, for the files a flash writes. */
  function userDir(): string {
    const made = scratchDir();
    chownSync(made, user.uid, user.gid);
    return made;
  }

  beforeAll(() => {
    user = ensureTestUser();
    dir = scratchDir();
    osImage(dir, 16 * MiB);
    sh(dir, 'xz -T2 -c os.img > os.img.xz');
    sudoEnv = { ...process.env, SUDO_UID: String(user.uid), SUDO_GID: String(user.gid), SUDO_USER: TEST_USER };
  });
  afterAll(() => cleanupLoops());

  it('an image only root may read is refused with the reason (the probe is the user), and read without sudo in the picture', async () => {
    // scratchDir() is root's, mode 0700.
    const image = join(dir, 'os.img.xz');
    const asUser = await cli(['info', '--json', image], sudoEnv);
    expect(asUser.run.code).not.toBe(0);
    expect(asUser.run.stderr).toContain(`sluice: ${image} cannot be read: EACCES: permission denied`);
    expect(asUser.seen.filter((p) => isProbe(p.argv)).map((p) => p.uids)).toEqual([
      [user.uid, user.uid, user.uid, user.uid],
    ]);
    const asRoot = await cli(['info', '--json', image], { ...process.env, SUDO_UID: undefined, SUDO_GID: undefined });
    expect(asRoot.run.code, asRoot.run.stderr).toBe(0);
    expect(JSON.parse(asRoot.run.stdout)).toMatchObject({
      format: 'xz',
      size: 16 * MiB,
      partitionTable: { type: 'gpt' },
    });
  });

  describe('a download, served slowly so that each process can be looked at while it runs', () => {
    let server: FileServer;
    let url: string;
    beforeAll(async () => {
      const body = readFileSync(join(dir, 'os.img.xz'));
      // Every answer (the probe's first bytes, its range requests, the decoder's download) starts
      // after 300 ms and trickles: 64 KiB every 10 ms.
      server = await serve((_request, response) => {
        setTimeout(() => {
          response.writeHead(200, { 'Content-Length': String(body.length) });
          let at = 0;
          const next = () => {
            if (response.destroyed) return;
            if (at >= body.length) return void response.end();
            response.write(body.subarray(at, (at += 64 * 1024)));
            setTimeout(next, 10);
          };
          next();
        }, 300);
      });
      url = `${server.base}/os.img.xz`;
    });
    afterAll(() => server.close());

    it('the probe and the decoder run as that user and group with no other groups; the user writes the file the decoded image goes to', async () => {
      const target = join(userDir(), 'written.img');
      const { run, seen } = await cli(['flash', '--yes', '--json', url, target], sudoEnv);
      expect(run.code, run.stderr).toBe(0);
      expect(resultsOf(run).get(target)).toMatchObject({ status: 'ok', bytes: 16 * MiB });
      expect(readFileSync(target).equals(readFileSync(join(dir, 'os.img')))).toBe(true);
      expect(statSync(target).uid).toBe(user.uid);
      const probes = seen.filter((p) => isProbe(p.argv));
      const decoders = seen.filter((p) => isDecoder(p.argv));
      expect(probes).toHaveLength(1);
      expect(decoders).toHaveLength(1);
      for (const p of [...probes, ...decoders]) {
        expect({ uids: p.uids, gids: p.gids, groups: p.groups }).toEqual({
          uids: Array(4).fill(user.uid),
          gids: Array(4).fill(user.gid),
          groups: [],
        });
      }
    });
  });

  it('a raw image is not opened by root at all: the user side reads it', async () => {
    const shared = scratchDir();
    sh(shared, `cp ${join(dir, 'os.img')} os.img`);
    shareWithTestUser(join(shared, 'os.img'));
    const target = join(userDir(), 'written.img');
    const { run, seen } = await cli(['flash', '--yes', '--json', join(shared, 'os.img'), target], sudoEnv);
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(target).equals(readFileSync(join(dir, 'os.img')))).toBe(true);
    expect(seen.every((p) => p.uids[0] === user.uid)).toBe(true);
  });

  it('an image the user may read is probed and flashed as under no sudo at all', async () => {
    const shared = scratchDir();
    sh(shared, `cp ${join(dir, 'os.img.xz')} os.img.xz`);
    shareWithTestUser(join(shared, 'os.img.xz'));
    const target = join(userDir(), 'written.img');
    const { run, seen } = await cli(['flash', '--yes', '--json', join(shared, 'os.img.xz'), target], sudoEnv);
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(target).equals(readFileSync(join(dir, 'os.img')))).toBe(true);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((p) => p.uids[0] === user.uid)).toBe(true);
  });
});
