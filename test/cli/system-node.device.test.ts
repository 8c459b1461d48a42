/**
 * The `sluice` bin of a clone (out/run/sluice.js, what `npx sluice` runs) started by an older system Node (Debian 12 has 18, this machine's
 * /usr/bin/node is 20) runs on the pinned Node instead: a zstd-compressed qcow2, which needs
 * node:zlib's zstd (Node 20's decoder died on it), flashes and verifies.
 */
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { collect, resultsOf, spawnCommand } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import { createLoop, readBytes, scratchDir, type LoopDevice } from '../support/loop-device.js';
import { osImage, sh } from '../support/os-image.js';

const SYSTEM_NODE = '/usr/bin/node';
const systemMajor = Number(
  execFileSync(SYSTEM_NODE, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).trim(),
);
/** What a terminal has: no node_modules/.bin in front, so `node` is the system's. */
const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

describeDevices('the sluice bin under an older system Node', () => {
  let dir: string;
  let loop: LoopDevice;

  beforeAll(() => {
    dir = scratchDir();
    osImage(dir, 16 * MiB);
    sh(dir, 'qemu-img convert -c -O qcow2 -o compression_type=zstd os.img os.qcow2');
    loop = createLoop({ size: 20 * MiB, dir });
    // Zeros first: the clusters qcow2 leaves unallocated (zeros in os.img) are left unwritten.
    sh(dir, `dd if=/dev/zero of=${loop.backing} bs=1M count=20 conv=notrunc status=none`);
  });

  it(`this machine's ${SYSTEM_NODE} is older than the Node Sluice needs (else this test proves nothing)`, () => {
    expect(systemMajor).toBeLessThan(24);
  });

  it('flashes a zstd qcow2 on the pinned Node', async () => {
    const child = spawnCommand(
      [
        SYSTEM_NODE,
        resolve('out/run/sluice.js'),
        'flash',
        '--yes',
        '--json',
        '--no-eject',
        join(dir, 'os.qcow2'),
        loop.path,
      ],
      undefined,
      { PATH },
    );
    const run = await collect(child);
    expect(run.code, run.stderr).toBe(0);
    expect(resultsOf(run).get(loop.path)).toMatchObject({ status: 'ok', verified: true });
    expect(readBytes(loop.backing, 0, 16 * MiB).equals(readBytes(join(dir, 'os.img'), 0, 16 * MiB))).toBe(true);
  });
});
