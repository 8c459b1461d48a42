import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { flashCli } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import { createLoop, scratchDir, writeRandomFile } from '../support/loop-device.js';

interface DeviceIo {
  call: 'pread64' | 'pwrite64';
  address: bigint;
  length: number;
  offset: number;
}

/**
 * Every read and write the CLI issued on `device`, as the kernel saw them (strace). Device
 * descriptors are followed from openat() to close() so reused numbers are not confused.
 */
function deviceIo(log: string, device: string): DeviceIo[] {
  const deviceFds = new Set<number>();
  const io: DeviceIo[] = [];
  for (const line of log.split('\n')) {
    const open = /openat\([^,]+, "([^"]+)", [^)]*\) = (\d+)/.exec(line);
    if (open?.[1] === device) deviceFds.add(Number(open[2]));
    const close = /close\((\d+)\)/.exec(line);
    if (close) deviceFds.delete(Number(close[1]));
    const call = /(pread64|pwrite64)\((0x[0-9a-f]+|\d+), (0x[0-9a-f]+|\d+), (0x[0-9a-f]+|\d+), (0x[0-9a-f]+|\d+)/.exec(
      line,
    );
    if (call && deviceFds.has(Number(call[2]))) {
      io.push({
        call: call[1] as DeviceIo['call'],
        address: BigInt(call[3] ?? 0),
        length: Number(call[4]),
        offset: Number(call[5]),
      });
    }
  }
  return io;
}

describeDevices('every device I/O is aligned in offset, length and buffer address', () => {
  it.each([1, 511, 4095, 1 * MiB + 1, 5 * MiB + 3])('%i-byte image', async (size) => {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    writeRandomFile(image, size);
    const loop = createLoop({ size: 8 * MiB, dir });
    const log = join(dir, 'strace.log');

    const run = await flashCli(image, [loop.path], [], {
      wrapper: [
        'strace',
        '--follow-forks',
        '--quiet=all',
        '-e',
        'trace=openat,close,pread64,pwrite64',
        '-e',
        'raw=pread64,pwrite64',
        '-o',
        log,
      ],
    });

    expect(run.code).toBe(0);
    const io = deviceIo(readFileSync(log, 'utf8'), loop.path);
    expect(io.filter((c) => c.call === 'pwrite64').length).toBeGreaterThan(0);
    expect(io.filter((c) => c.call === 'pread64').length).toBeGreaterThan(0);
    for (const c of io) {
      expect({ ...c, address: c.address % 4096n }).toMatchObject({ address: 0n });
      expect(c.length % 512).toBe(0);
      expect(c.offset % 512).toBe(0);
    }
  });
});
