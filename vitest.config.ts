import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Two projects, by what a test needs beyond Node:
 * - "portable": nothing else; they run on every OS (the macOS and Windows CI jobs run these).
 * - "linux": Linux itself or its tools. *.device.test.ts need root and loop devices;
 *   *.linux.test.ts need Linux tools (sfdisk, mkfs.*, losetup, xz, qemu-img, bmaptool, GNU
 *   coreutils, /proc: test/setup/packages.list) but no device. Where a tool is missing, `npm test`
 *   says which package to install before it starts (test/setup/check-tools.ts).
 * - "disks": *.disk.test.ts, on a real disk of the OS that runs them (test/support/test-disk.ts:
 *   a loop device, a macOS RAM disk, a Windows VHD); the CI jobs of each OS run them
 *   (.github/workflows/ci.yml), and Linux's run in "linux" as well.
 * `npm run test:portable` proves the split: it runs "portable" with a PATH that has none of them.
 */
const DISKS = ['test/**/*.disk.test.ts'];
/** Files named for another OS (*.win32.*, *.darwin.*) run on that OS only; elsewhere they are left out, not skipped. */
const OTHER_OS = ['win32', 'darwin'].filter((os) => os !== process.platform).map((os) => `test/**/*.${os}.*test.ts`);
const LINUX = ['test/**/*.device.test.ts', 'test/**/*.linux.test.ts', ...DISKS];

/**
 * The file that boots customised cards in QEMU takes about 40% of `npm test` on its own (four TCG
 * guests). Started first, the other worker works through every other file beside it; started
 * where vitest would put it (by its size, eighth), the run waits for it at the end.
 */
const FIRST = 'test/cli/boot.device.test.ts';

class BootFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const first = (file: TestSpecification) => file.moduleId.endsWith(FIRST);
    return [...sorted.filter(first), ...sorted.filter((file) => !first(file))];
  }
}

export default defineConfig({
  test: {
    // Device tests spawn real processes and move real bytes; their time is I/O, not CPU.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // expect.poll waits on a real app, helper or browser; its 1 s default failed a probed name's
    // wait under the full suite's load (2 workers on 2 cores), where a probe took longer.
    expect: { poll: { timeout: 15_000 } },
    pool: 'forks',
    // In CI on Linux, where every test of the tree must run, a skipped test fails the run.
    reporters: [
      'default',
      ...(process.env['CI'] && process.platform === 'linux' ? ['./test/setup/skips-fail-ci.ts'] : []),
    ],
    setupFiles: ['test/setup/cpu-per-file.ts', 'test/setup/scratch-cleanup.ts'],
    sequence: { sequencer: BootFirst },
    // Two cores: more workers only make the device tests fight over them.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'portable',
          include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
          exclude: [...configDefaults.exclude, ...OTHER_OS, ...LINUX],
        },
      },
      {
        extends: true,
        test: {
          name: 'linux',
          include: LINUX,
          exclude: [...configDefaults.exclude, ...OTHER_OS],
          globalSetup: ['test/setup/require-root.ts'],
        },
      },
      // On Linux the disk tests are in "linux" already (they need root, as its others do).
      ...(process.platform === 'linux'
        ? []
        : [
            {
              extends: true,
              test: { name: 'disks', include: DISKS, exclude: [...configDefaults.exclude, ...OTHER_OS] },
            },
          ]),
    ],
  },
});
