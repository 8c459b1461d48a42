/**
 * The release workflow runs only on GitHub's runners, so its shape is checked here: one job per
 * OS on that OS, tests before packaging, the packaged helper probed where electron-builder puts
 * the unpacked app, and an artifact pattern for every installer electron-builder.yml asks for.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TargetConfiguration } from 'electron-builder';
import { loadBuilderConfig, parseYamlStrictly } from '../../build/scripts/builder-config.js';

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
}
interface MatrixEntry {
  os: string;
  container?: { image: string; options: string };
  test: string;
  unpacked: string;
  artifacts: string;
}
interface Workflow {
  on: Record<string, unknown>;
  permissions: Record<string, string>;
  jobs: Record<string, { 'runs-on': string; container: string; strategy: { matrix: { include: MatrixEntry[] } }; steps: Step[] }>;
}

const workflow = parseYamlStrictly(resolve('.github/workflows/release.yml')) as Workflow;
const config = loadBuilderConfig();
const job = workflow.jobs['dist']!;
const matrix = job.strategy.matrix.include;

/** The file extension of each installer a platform's electron-builder targets produce. */
const INSTALLER_EXTENSIONS: Record<string, Record<string, string>> = {
  linux: { AppImage: 'AppImage', deb: 'deb', rpm: 'rpm' },
  mac: { dmg: 'dmg', zip: 'zip' },
  win: { nsis: 'exe', portable: 'exe' },
};
const RUNNER_PLATFORM: Record<string, { prefix: string; unpacked: string }> = {
  // macos-14 runners are Apple silicon: electron-builder names the arm64 app's folder mac-arm64.
  linux: { prefix: 'ubuntu-', unpacked: 'dist/linux-unpacked' },
  mac: { prefix: 'macos-', unpacked: 'dist/mac-arm64' },
  win: { prefix: 'windows-', unpacked: 'dist/win-unpacked' },
};

function stepIndex(predicate: (step: Step) => boolean, what: string): number {
  const index = job.steps.findIndex(predicate);
  expect(index, what).toBeGreaterThanOrEqual(0);
  return index;
}

describe('.github/workflows/release.yml', () => {
  it('runs on release tags and by hand, with read-only repository access', () => {
    expect(Object.keys(workflow.on).sort()).toEqual(['push', 'workflow_dispatch']);
    expect(workflow.permissions).toEqual({ contents: 'read' });
  });

  it('builds each OS on its own runner and collects every installer electron-builder.yml configures', () => {
    expect(job['runs-on']).toBe('${{ matrix.os }}');
    expect(matrix).toHaveLength(3);
    for (const [platform, { prefix, unpacked }] of Object.entries(RUNNER_PLATFORM)) {
      const entry = matrix.find((candidate) => candidate.os.startsWith(prefix));
      expect(entry, platform).toBeDefined();
      expect(entry!.unpacked).toBe(unpacked);
      const patterns = entry!.artifacts.trim().split('\n');
      const platformConfig = config[platform as 'linux' | 'mac' | 'win'] as { target: TargetConfiguration[] };
      for (const { target } of platformConfig.target) {
        expect(patterns, `${platform} ${target}`).toContain(`dist/*.${INSTALLER_EXTENSIONS[platform]![target]}`);
      }
    }
  });

  it('tests before it packages, checks the packaged binary’s fuses, probes the packaged helper, then uploads', () => {
    const test = stepIndex((step) => step.run === '${{ matrix.test }}', 'test step');
    const dist = stepIndex((step) => step.run?.startsWith('npm run dist') === true, 'package step');
    const fuses = stepIndex((step) => step.run === 'node out/build/scripts/check-fuses.js ${{ matrix.unpacked }}', 'fuse check step');
    const probe = stepIndex((step) => step.run === 'node out/build/scripts/probe-helper.js ${{ matrix.unpacked }}', 'probe step');
    const upload = stepIndex((step) => step.uses?.startsWith('actions/upload-artifact@') === true, 'upload step');
    expect([test, dist, fuses, probe, upload]).toEqual([...[test, dist, fuses, probe, upload]].sort((a, b) => a - b));
    // deb and rpm refuse to build without a project URL (see linux.maintainer in electron-builder.yml).
    expect(job.steps[dist]!.run).toContain('-c.extraMetadata.homepage=${{ github.server_url }}/${{ github.repository }}');
    expect(job.steps[upload]!.with).toMatchObject({ path: '${{ matrix.artifacts }}', 'if-no-files-found': 'error' });
  });

  it('runs the project’s CI, the whole suite as root, on Linux, in the Debian it is written for', () => {
    expect(job.container).toBe('${{ matrix.container }}');
    const linux = matrix.find((entry) => entry.os.startsWith('ubuntu-'))!;
    expect(linux.test).toBe('.ci/run');
    expect(linux.container).toEqual({ image: 'debian:bookworm', options: '--privileged' });
    expect(readFileSync('.ci/run', 'utf8')).toMatch(/^npm test$/m);
    for (const entry of matrix.filter((entry) => entry !== linux)) {
      expect(entry.container, entry.os).toBeUndefined();
      expect(entry.test, entry.os).toMatch(/\bnpm run build\b/);
    }
  });

  it('uses the Node major the project pins', () => {
    const pinned = (JSON.parse(readFileSync('package.json', 'utf8')) as { devDependencies: Record<string, string> }).devDependencies['node']!;
    const setup = job.steps.find((step) => step.uses?.startsWith('actions/setup-node@'));
    expect(String(setup?.with?.['node-version'])).toBe(pinned.replace(/^\^/, '').split('.')[0]);
  });

  it('packages with a dist script that builds first and never publishes', () => {
    const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts['dist']).toMatch(/^npm run build && electron-builder\b.*--publish never/);
  });
});
