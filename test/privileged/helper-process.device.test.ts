/**
 * The real helper process, started the way the app starts it when it is root already (a direct
 * child, channel on fd 3), writing real loop devices.
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, closeSync, copyFileSync, mkdirSync, openSync, readFileSync, symlinkSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';
import type { Progress } from '../../common/domain/progress.js';
import type { TargetResult } from '../../common/domain/result.js';
import { exitCodeFor, EXIT } from '../../cli/exit-codes.js';
import { MAX_FRAME_BYTES } from '../../common/contracts/helper-protocol.js';
import { MiB } from '../../common/domain/units.js';
import { encodeFrame, FrameReader } from '../../node/framing.js';
import { packagedHelperProgram, type HelperProgram } from '../../user/launcher/helper-program.js';
import { startHelper } from '../../user/launcher/launch.js';
import { assertTestTarget, collect, spawnCli, waitForEvent } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import {
  createLoop,
  digestFile,
  partitionedLoop,
  readBytes,
  scratchDir,
  writeRandomFile,
  type LoopDevice,
} from '../support/loop-device.js';
import { isHelper, listeningSocketsOf, waitForDescendant, waitForExit } from '../support/processes.js';
import { raceLink } from '../support/link-racer.js';
import { slowCard } from '../support/throttle.js';
import { builtHelper } from '../support/unprivileged.js';

/** Runs of each symlink-swap race. */
const RACE_RUNS = 100;

/** The built helper, made to join a blkio cgroup before it starts, so its writes go at SD-card speed. */
function helperInGroup(cgroup: string): HelperProgram {
  const helper = builtHelper();
  return {
    file: 'sh',
    args: ['-c', `echo $$ > '${cgroup}/cgroup.procs' && exec "$@"`, 'sh', helper.file, ...helper.args],
    env: {},
  };
}

/** Phases must come in order, and within a phase bytesDone never goes back. */
function expectOrderedProgress(progress: readonly Progress[]): void {
  const order = ['writing', 'syncing', 'verifying'];
  let phaseIndex = 0;
  let last = -1;
  for (const p of progress) {
    const index = order.indexOf(p.phase);
    expect(index).toBeGreaterThanOrEqual(phaseIndex);
    if (index > phaseIndex) {
      phaseIndex = index;
      last = -1;
    }
    expect(p.bytesDone).toBeGreaterThanOrEqual(last);
    last = p.bytesDone;
  }
  expect(new Set(progress.map((p) => p.phase))).toEqual(new Set(order));
}

describeDevices('the helper process, started directly', () => {
  it('decoder → pipe → helper → loop device: ready, progress in order, ok, and the device holds the image', async () => {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    const size = 24 * MiB + 4097;
    writeRandomFile(image, size);
    execFileSync('gzip', ['--keep', '--fast', image]);
    const loop = createLoop({ size: 32 * MiB, dir });
    assertTestTarget(loop.path);
    // The decoder stand-in: an unrelated process that writes into its stdin socket, which becomes
    // the helper's stdin, as the real decoder does (user/images/processes/decoder-launch.ts). Not its stdout:
    // Node reads a child's stdout into this process as soon as it exists, and whatever arrives
    // before the helper is spawned (64 KiB, once the launcher awaits a look at the drive names)
    // never reaches the helper.
    const decoder = spawn('sh', ['-c', 'exec gzip -dc "$1" >&0', 'sh', `${image}.gz`], {
      stdio: ['pipe', 'ignore', 'inherit'],
    });
    const progress: Progress[] = [];

    const job = startHelper({
      // A socket: it goes both ways.
      source: decoder.stdin as Socket,
      job: { kind: 'flash', targets: [loop.path], imageSize: size, sourceSeekable: false, verify: true },
      program: builtHelper(),
      onProgress: (p) => progress.push(p),
    });
    const [pid, results] = await Promise.all([job.ready, job.result]);

    expect(pid).toBeGreaterThan(0);
    expect(results).toEqual([
      expect.objectContaining({ status: 'ok', target: loop.path, bytes: size, written: true, verified: true }),
    ]);
    expectOrderedProgress(progress);
    expect(progress.at(-1)).toMatchObject({ phase: 'verifying', bytesDone: size });
    expect(readBytes(loop.backing, 0, size).equals(readFileSync(image))).toBe(true);
  });

  it('kill -9 of the helper mid-write: the result is helper-died, naming SIGKILL', async () => {
    const { image, loop, group } = slowCard();
    const fd = openSync(image, 'r');
    try {
      assertTestTarget(loop.path);
      let killed = false;
      const job = startHelper({
        source: fd,
        job: { kind: 'flash', targets: [loop.path], imageSize: 96 * MiB, sourceSeekable: true, verify: true },
        program: helperInGroup(group.dir),
        onProgress: (p) => {
          if (!killed && p.phase === 'writing' && p.bytesDone > 8 * MiB) {
            killed = true;
            void job.ready.then((pid) => pid !== null && process.kill(pid, 'SIGKILL'));
          }
        },
      });
      const [result] = await job.result;
      expect(killed).toBe(true);
      expect(result).toMatchObject({ status: 'failed', code: 'helper-died' });
      expect(result?.status === 'failed' && result.message).toMatch(/stopped unexpectedly \(killed by SIGKILL\)/);
    } finally {
      closeSync(fd);
      group.remove();
    }
  });

  it('the parent killed mid-write: the helper stops within 2 s, leaving the partition table area blank (and nothing listened)', async () => {
    const { image, loop, group } = slowCard();
    try {
      assertTestTarget(loop.path);
      const cli = spawnCli(['flash', '--yes', '--json', image, loop.path], { cgroup: group.dir });
      const done = collect(cli);
      await waitForEvent(
        cli,
        (e) => e.type === 'progress' && e['phase'] === 'writing' && Number(e['bytesDone']) > 8 * MiB,
      );
      const helper = await waitForDescendant(cli.pid ?? 0, isHelper);
      // Its channel is an inherited socket pair: nothing of the helper's or the app's listens.
      expect(await listeningSocketsOf([helper, cli.pid ?? 0])).toEqual([]);

      cli.kill('SIGKILL');
      const ms = await waitForExit(helper, 5000);
      await done;

      expect(ms).toBeLessThan(2000);
      // It stopped the job (the first MiB is written last, so it stays blank), rather than finishing it.
      expect(readBytes(loop.backing, 0, 1 * MiB).every((b) => b === 0)).toBe(true);
    } finally {
      group.remove();
    }
  });

  it('runs through the packaged launcher script (build/helper/sluice-helper), with Node standing in for the app binary', async () => {
    // The packaged layout: <app>/sluice, <app>/resources/sluice-helper, <app>/resources/app.asar.unpacked/out.
    const app = join(scratchDir(), 'Sluice');
    mkdirSync(join(app, 'resources', 'app.asar.unpacked'), { recursive: true });
    symlinkSync(process.execPath, join(app, 'sluice'));
    copyFileSync(resolve('build/helper/sluice-helper'), join(app, 'resources', 'sluice-helper'));
    execFileSync('chmod', ['755', join(app, 'resources', 'sluice-helper')]);
    symlinkSync(resolve('out'), join(app, 'resources', 'app.asar.unpacked', 'out'));
    const image = join(app, 'image.img');
    writeRandomFile(image, 3 * MiB + 5);
    const loop = createLoop({ size: 8 * MiB });
    assertTestTarget(loop.path);
    const fd = openSync(image, 'r');
    try {
      const job = startHelper({
        source: fd,
        job: { kind: 'flash', targets: [loop.path], imageSize: 3 * MiB + 5, sourceSeekable: true, verify: true },
        program: packagedHelperProgram(join(app, 'resources'), 'linux'),
      });
      expect(await job.result).toEqual([expect.objectContaining({ status: 'ok', bytes: 3 * MiB + 5 })]);
      expect(readBytes(loop.backing, 0, 3 * MiB + 5).equals(readFileSync(image))).toBe(true);
    } finally {
      closeSync(fd);
    }
  });
});

interface RawHelper {
  loop: LoopDevice;
  /** The loop's backing file's digest before the helper started. */
  before: string;
  channel: Socket;
  replies: Promise<{ messages: { type: string; [key: string]: unknown }[]; code: number | null; stderr: string }>;
}

/**
 * A 4 MiB loop device (`loop`, or a fresh one), and the helper started for it (or for `name`, which
 * leads to it) as a direct child with a 2 MiB image on fd 0 and a raw channel on fd 3: the test is
 * a hostile or confused app.
 */
function rawHelper(
  options: { loop?: LoopDevice; name?: string; readOnly?: boolean; argv?: (drive: string) => string[] } = {},
): RawHelper {
  const dir = scratchDir();
  const image = join(dir, 'image.img');
  writeRandomFile(image, 2 * MiB);
  const loop = options.loop ?? createLoop({ size: 4 * MiB, dir });
  const before = digestFile(loop.backing);
  assertTestTarget(loop.path);
  const helper = builtHelper();
  const fd = openSync(image, 'r');
  const drive = options.name ?? loop.path;
  const argv =
    options.argv?.(drive) ??
    (options.readOnly === true ? ['--read-only', '--source', drive, '--'] : ['--write', '--', drive]);
  const child = spawn(helper.file, [...helper.args, ...argv], {
    stdio: [fd, 'ignore', 'pipe', 'pipe'],
  });
  closeSync(fd);
  const channel = child.stdio[3] as Socket;
  const reader = new FrameReader();
  const messages: { type: string; [key: string]: unknown }[] = [];
  channel.on('data', (chunk: Buffer) => messages.push(...(reader.push(chunk) as { type: string }[])));
  channel.on('error', () => undefined);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const replies = new Promise<Awaited<RawHelper['replies']>>((resolvePromise) =>
    child.on('close', (code) => resolvePromise({ messages, code, stderr })),
  );
  return { loop, before, channel, replies };
}

function frame(length: number, body: string): Buffer {
  const header = Buffer.alloc(4);
  header.writeUInt32BE(length, 0);
  return Buffer.concat([header, Buffer.from(body)]);
}

describeDevices('the helper refuses bad instructions and writes nothing', () => {
  // pkexec picks the password prompt by the first argument alone (exec.argv1, build/polkit/).
  const misplacedModes: [string, (drive: string) => string[]][] = [
    ['no mode at all', (drive) => ['--', drive]],
    ['--write after another option', (drive) => ['--parent-pid', String(process.pid), '--write', '--', drive]],
    ['--read-only after the source', (drive) => ['--source', drive, '--read-only', '--']],
  ];
  for (const [name, argv] of misplacedModes) {
    it(`a command line with ${name}: exit 2 and the reason, before the channel or the drive is opened`, async () => {
      const { loop, before, channel, replies } = rawHelper({ argv });
      channel.write(
        encodeFrame({
          type: 'job',
          job: { kind: 'flash', targets: [loop.path], imageSize: 2 * MiB, sourceSeekable: true, verify: true },
        }),
      );

      const { messages, code, stderr } = await replies;
      expect(code).toBe(2);
      expect(stderr).toMatch(/^sluice-helper: the first argument must be the mode, --write or --read-only/);
      expect(messages).toEqual([]);
      expect(digestFile(loop.backing)).toBe(before);
    });
  }

  const start = (target: string, extra: Record<string, unknown> = {}) => ({
    type: 'job',
    job: { kind: 'flash', targets: [target], imageSize: 2 * MiB, sourceSeekable: true, verify: true, ...extra },
  });
  const cases: [string, (target: string) => Buffer, RegExp, { readOnly?: boolean }?][] = [
    ['malformed JSON', () => frame(7, '{"type"'), /not valid JSON/],
    [
      'a frame over the 64 KiB cap (refused from its header, before its body arrives)',
      () => frame(MAX_FRAME_BYTES + 1, '{'),
      /exceeds/,
    ],
    ['a message of an unknown type', () => encodeFrame({ type: 'eject', target: '/dev/sda' }), /invalid message/],
    ['a start with a field the schema does not know', (t) => encodeFrame(start(t, { force: true })), /invalid message/],
    ['a start with the wrong types', (t) => encodeFrame(start(t, { imageSize: '2 MiB' })), /invalid message/],
    ['cancel before start', () => encodeFrame({ type: 'cancel' }), /cancel before start/],
    ['a start naming a drive the helper was not started for', () => encodeFrame(start('/dev/loop999')), /started for/],
    // Reading a drive (a clone's or a backup's source) needs its own authorization on the command line.
    [
      'a clone of a drive the helper was not started to read',
      (t) => encodeFrame({ type: 'job', job: { kind: 'clone', source: '/dev/loop998', targets: [t], verify: true } }),
      /asks for writing \/dev\/loop\d+ and reading \/dev\/loop998, but the helper was started for writing/,
    ],
    [
      'a backup of a drive the helper was not started to read',
      (t) => encodeFrame({ type: 'job', job: { kind: 'backup', source: t } }),
      /asks for reading \/dev\/loop\d+, but the helper was started for writing/,
    ],
    // A backup's password prompt said the drive would only be read (build/polkit/): such a helper writes nothing.
    [
      'a flash of its drive, sent to a helper started --read-only',
      (t) => encodeFrame(start(t)),
      /started read-only \(--read-only\), and the flash job would write \/dev\/loop\d+/,
      { readOnly: true },
    ],
    [
      'a clone onto its drive, sent to a helper started --read-only',
      (t) => encodeFrame({ type: 'job', job: { kind: 'clone', source: t, targets: [t], verify: true } }),
      /started read-only \(--read-only\), and the clone job would write/,
      { readOnly: true },
    ],
    // The app's own idea of the drive (size, model) has no place in the protocol: the helper looks for itself.
    [
      'a start carrying the app’s description of the drive',
      (t) => encodeFrame(start(t, { drives: [{ device: t, size: 1 << 40 }] })),
      /invalid message/,
    ],
  ];

  for (const [name, make, reason, options] of cases) {
    it(name, async () => {
      const { loop, before, channel, replies } = rawHelper(options);
      channel.write(make(loop.path));

      const { messages, code } = await replies;
      expect(messages[0]).toMatchObject({ type: 'ready' });
      const fatal = messages.find((m) => m.type === 'fatal');
      expect(fatal).toMatchObject({ code: 'protocol-error' });
      expect(String(fatal?.['message'])).toMatch(reason);
      expect(messages.some((m) => m.type === 'progress' || m.type === 'result')).toBe(false);
      expect(code).toBe(5);
      expect(digestFile(loop.backing)).toBe(before);
    });
  }

  // A violation after the job message is the job's failure (a script sees exit 1), never a cancel (130).
  const violations: [string, (target: string) => Buffer, RegExp][] = [
    ['a second job message', (t) => encodeFrame(start(t)), /second job message/],
    [
      'a repair-data message for a repair the helper never asked for',
      () => encodeFrame({ type: 'repair-data', id: 1, offset: 0, data: Buffer.alloc(16).toString('base64') }),
      /never made/,
    ],
  ];
  for (const [name, violation, reason] of violations) {
    it(`${name}: the job fails with protocol-error before it writes anything`, async () => {
      const { loop, before, channel, replies } = rawHelper();
      channel.write(Buffer.concat([encodeFrame(start(loop.path)), violation(loop.path)]));

      const { messages } = await replies;
      expect(messages.find((m) => m.type === 'log')).toMatchObject({
        level: 'warn',
        message: expect.stringMatching(reason),
      });
      const result = messages.find((m) => m.type === 'result') as { results: TargetResult[] } | undefined;
      expect(result?.results).toEqual([
        expect.objectContaining({
          status: 'failed',
          code: 'protocol-error',
          bytes: 0,
          message: expect.stringMatching(reason),
        }),
      ]);
      expect(exitCodeFor(result?.results ?? [])).toBe(EXIT.failed);
      expect(digestFile(loop.backing)).toBe(before);
    });
  }
});

describeDevices('drive names the helper refuses, before opening anything', () => {
  const start = (target: string) =>
    encodeFrame({
      type: 'job',
      job: { kind: 'flash', targets: [target], imageSize: 2 * MiB, sourceSeekable: true, verify: true },
    });

  it('a link to a disk: the helper takes only the disk’s own name, and says which it is', async () => {
    const loop = createLoop({ size: 4 * MiB });
    const link = join(scratchDir(), 'card');
    symlinkSync(loop.path, link);
    const { before, channel, replies } = rawHelper({ loop, name: link });
    channel.write(start(link));
    const { messages, code } = await replies;
    expect(messages.find((m) => m.type === 'result')).toMatchObject({
      results: [
        {
          status: 'failed',
          target: link,
          code: 'target-not-block-device',
          message: expect.stringContaining(`is another name for ${loop.path}`),
        },
      ],
    });
    expect(code).toBe(0);
    expect(digestFile(loop.backing)).toBe(before);
  });

  it(`a link another process keeps turning between a disk and a root-only file, ${RACE_RUNS} times: refused every time, nothing touched`, async () => {
    const dir = scratchDir();
    const loop = createLoop({ size: 4 * MiB, dir });
    const secret = join(dir, 'secret');
    writeRandomFile(secret, 4 * MiB);
    chmodSync(secret, 0o600);
    const secretBefore = digestFile(secret);
    const link = join(dir, 'card');
    const racer = raceLink(link, [loop.path, secret]);
    try {
      for (let run = 0; run < RACE_RUNS; run++) {
        const { before, channel, replies } = rawHelper({ loop, name: link });
        channel.write(start(link));
        const { messages } = await replies;
        // "another name for /dev/loopN", or "not a disk" when it led to the file.
        expect(messages.find((m) => m.type === 'result')).toMatchObject({
          results: [{ status: 'failed', target: link, code: 'target-not-block-device' }],
        });
        expect(messages.some((m) => m.type === 'progress')).toBe(false);
        expect(digestFile(loop.backing)).toBe(before);
      }
    } finally {
      await racer.stop();
    }
    expect(digestFile(secret)).toBe(secretBefore);
  });
});

describeDevices('targets the helper refuses on its own look, before writing a byte', () => {
  async function refusedByHelper(
    target: string,
    backing: string,
    imageSize: number,
  ): Promise<Record<string, unknown> | undefined> {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    writeRandomFile(image, imageSize);
    const before = digestFile(backing);
    assertTestTarget(target);
    const fd = openSync(image, 'r');
    try {
      const job = startHelper({
        source: fd,
        job: { kind: 'flash', targets: [target], imageSize, sourceSeekable: true, verify: true },
        program: builtHelper(),
      });
      const [result] = await job.result;
      expect(digestFile(backing)).toBe(before);
      return result as Record<string, unknown> | undefined;
    } finally {
      closeSync(fd);
    }
  }

  it('a regular file', async () => {
    const file = join(scratchDir(), 'not-a-disk.img');
    writeRandomFile(file, 4 * MiB);
    expect(await refusedByHelper(file, file, 1 * MiB)).toMatchObject({
      status: 'failed',
      code: 'target-not-block-device',
    });
  });

  it('a partition', async () => {
    const loop = await partitionedLoop('label: dos\nstart=2048, size=8192, type=83\n');
    expect(await refusedByHelper(`${loop.path}p1`, loop.backing, 1 * MiB)).toMatchObject({
      status: 'failed',
      code: 'target-is-partition',
    });
  });

  it('a drive the app believes is big enough: the helper measures it itself and finds it too small', async () => {
    // Whatever the app's drive list said (it may be stale, or lie), the job message carries only
    // the path; the helper reads the size from the kernel. (A start that carries a description is
    // refused outright: see "the app's description of the drive" above.)
    const loop = createLoop({ size: 8 * MiB });
    const result = await refusedByHelper(loop.path, loop.backing, 12 * MiB);
    expect(result).toMatchObject({ status: 'failed', code: 'target-too-small' });
    expect(String(result?.['message'])).toContain(`${8 * MiB} bytes`);
  });
});
