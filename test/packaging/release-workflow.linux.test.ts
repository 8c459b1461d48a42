/**
 * The release workflow runs only on GitHub's runners, so its shape is checked here: one job per
 * OS on that OS, tests before packaging, the packaged helper probed where electron-builder puts
 * the unpacked app, and an artifact pattern for every installer electron-builder.yml asks for.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { TargetConfiguration } from 'electron-builder';
import { loadBuilderConfig, parseYamlStrictly } from '../../build/scripts/builder-config.js';
import { expand, runStep, stepRuns, type Contexts, type Step } from '../support/workflow.js';

interface MatrixEntry {
  os: string;
  'container-image': string;
  'container-options': string;
  test: string;
  unpacked: string;
  artifacts: string;
}
interface Job {
  'runs-on': string;
  needs?: string;
  if?: string;
  permissions?: Record<string, string>;
  container?: { image: string; options: string };
  strategy: { matrix: { include: MatrixEntry[] } };
  steps: Step[];
}
interface Workflow {
  on: Record<string, unknown>;
  permissions: Record<string, string>;
  defaults: { run: { shell: string } };
  jobs: Record<string, Job>;
}

const workflow = parseYamlStrictly(resolve('.github/workflows/release.yml')) as Workflow;
const config = loadBuilderConfig();
const job = workflow.jobs['dist']!;
const release = workflow.jobs['release']!;
const matrix = job.strategy.matrix.include;

/** The file extension of each installer a platform's electron-builder targets produce. */
const INSTALLER_EXTENSIONS: Record<string, Record<string, string>> = {
  linux: { AppImage: 'AppImage', deb: 'deb', rpm: 'rpm' },
  mac: { dmg: 'dmg', zip: 'zip' },
  win: { nsis: 'exe' },
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

const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
const RUNNER_OS: Record<string, string> = { ubuntu: 'Linux', macos: 'macOS', windows: 'Windows' };
const SECRETS = {
  CSC_LINK: 'apple-cert',
  CSC_KEY_PASSWORD: 'apple-pw',
  WIN_CSC_LINK: 'windows-cert',
  WIN_CSC_KEY_PASSWORD: 'windows-pw',
  APPLE_API_KEY_P8: '',
};

/** What a push of `tag` gives a job's steps to evaluate, on the runner of `entry`. */
function contexts(entry: MatrixEntry | undefined, tag: string): Contexts {
  const os = entry === undefined ? 'Linux' : RUNNER_OS[entry.os.split('-')[0]!]!;
  return {
    matrix: entry ?? {},
    runner: { os, temp: '/tmp' },
    github: {
      ref: `refs/tags/${tag}`,
      ref_name: tag,
      repository: 'sluice/sluice',
      server_url: 'https://github.com',
      token: 'token',
    },
    secrets: SECRETS,
  };
}

/**
 * The steps not run here, and where what they do is checked instead. Every other `run:` step of
 * both jobs runs in the test below, for every matrix entry whose `if:` selects it.
 */
const NOT_RUN_HERE: Record<string, string> = {
  Test: "the Linux entry's .ci/run is this suite's own CI; the others' portable project runs here in `npm run test:portable`",
  'npm ci': 'installs; .ci/run does it on Linux',
  Package: "electron-builder for that runner's OS; test/packaging/package-layout.test.ts runs it for Linux",
  "Check the packaged binary's fuses": 'needs the packaged Electron binary of that OS',
  'Probe the packaged helper': 'needs the packaged app of that OS',
};
const stepName = (step: Step) => step.name ?? step.run ?? step.uses ?? '';

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A workspace with package.json, the unpacked app and one installer per artifact pattern, and a `gh` that records its arguments. */
function workspace(entries: readonly MatrixEntry[]): {
  root: string;
  env: Record<string, string>;
  installers: string[];
} {
  const root = mkdtempSync(join(tmpdir(), 'sluice-workflow-'));
  dirs.push(root);
  const installers: string[] = [];
  writeFileSync(join(root, 'package.json'), readFileSync('package.json'));
  for (const entry of entries) {
    mkdirSync(join(root, entry.unpacked), { recursive: true });
    writeFileSync(join(root, entry.unpacked, 'app'), 'app');
    for (const pattern of entry.artifacts.trim().split('\n')) {
      const file = pattern.replace('*', `Sluice-${version}-${entry.os}`);
      mkdirSync(join(root, dirname(file)), { recursive: true });
      writeFileSync(join(root, file), `installer ${file}`);
      installers.push(file);
    }
  }
  const bin = join(root, '.bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'gh'), '#!/bin/sh\nprintf \'%s\\n\' "$@" > "$RUNNER_TEMP/gh-args"\n');
  chmodSync(join(bin, 'gh'), 0o755);
  mkdirSync(join(root, '.temp'));
  const env = {
    PATH: `${bin}:${process.env['PATH'] ?? ''}`,
    HOME: root,
    RUNNER_TEMP: join(root, '.temp'),
    GITHUB_ENV: join(root, '.temp', 'env'),
  };
  return { root, env, installers };
}

describe('.github/workflows/release.yml', () => {
  it('runs on release tags and by hand, read-only but for the job that publishes, with bash on every OS', () => {
    expect(Object.keys(workflow.on).sort()).toEqual(['push', 'workflow_dispatch']);
    expect(workflow.permissions).toEqual({ contents: 'read' });
    expect(workflow.defaults.run.shell).toBe('bash');
    expect(Object.keys(workflow.jobs).sort()).toEqual(['dist', 'release']);
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
    const fuses = stepIndex(
      (step) => step.run === 'node out/build/scripts/check-fuses.js "$UNPACKED"',
      'fuse check step',
    );
    const probe = stepIndex((step) => step.run === 'node out/build/scripts/probe-helper.js "$UNPACKED"', 'probe step');
    const upload = stepIndex((step) => step.uses?.startsWith('actions/upload-artifact@') === true, 'upload step');
    expect([test, dist, fuses, probe, upload]).toEqual([...[test, dist, fuses, probe, upload]].sort((a, b) => a - b));
    // deb and rpm refuse to build without a project URL (see linux.maintainer in electron-builder.yml).
    expect(job.steps[dist]!.run).toContain('"-c.extraMetadata.homepage=$GITHUB_SERVER_URL/$GITHUB_REPOSITORY"');
    expect(job.steps[upload]!.with).toMatchObject({ path: '${{ matrix.artifacts }}', 'if-no-files-found': 'error' });
  });

  it('runs the project’s CI, the whole suite as root, on Linux, in the Debian it is written for; elsewhere the portable tests, on the runner itself', () => {
    expect(job.container).toEqual({
      image: '${{ matrix.container-image }}',
      options: '${{ matrix.container-options }}',
    });
    const linux = matrix.find((entry) => entry.os.startsWith('ubuntu-'))!;
    expect(linux.test).toBe('.ci/run');
    expect([linux['container-image'], linux['container-options']]).toEqual(['debian:bookworm', '--privileged']);
    expect(readFileSync('.ci/run', 'utf8')).toMatch(/^npm test$/m);
    for (const entry of matrix.filter((entry) => entry !== linux)) {
      // An empty image is no container (actions/runner#2235).
      expect(entry['container-image'], entry.os).toBe('');
      expect(entry.test, entry.os).toMatch(/^npm run build && npx vitest run --project portable\b/);
    }
  });

  it('uses the Node major the project pins', () => {
    const pinned = (JSON.parse(readFileSync('package.json', 'utf8')) as { devDependencies: Record<string, string> })
      .devDependencies['node']!;
    const setup = job.steps.find((step) => step.uses?.startsWith('actions/setup-node@'));
    expect(String(setup?.with?.['node-version'])).toBe(pinned.replace(/^\^/, '').split('.')[0]);
  });

  it('packages with a dist script that builds first and never publishes itself', () => {
    const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts['dist']).toMatch(/^npm run build && electron-builder\b.*--publish never/);
  });

  it('pins every action by a full commit, and caches Electron’s downloads', () => {
    const uses = [...job.steps, ...release.steps].flatMap((step) => (step.uses === undefined ? [] : [step.uses]));
    expect(uses.length).toBeGreaterThan(5);
    for (const action of uses) expect(action).toMatch(/^[\w-]+\/[\w-]+@[0-9a-f]{40}$/);
    const cache = job.steps.find((step) => step.uses?.startsWith('actions/cache@'));
    expect(String(cache?.with?.['path'])).toContain('~/.cache/electron');
  });

  it('signs each OS with its own certificate: Apple’s never reaches Windows, Windows’ never reaches macOS', () => {
    const pack = job.steps.find((step) => step.name === 'Package')!;
    const signing = (os: string) => {
      const env = Object.fromEntries(
        Object.entries(pack.env ?? {}).map(([key, value]) => [
          key,
          expand(
            value,
            contexts(
              matrix.find((entry) => entry.os.startsWith(os)),
              `v${version}`,
            ),
          ),
        ]),
      );
      return [env['CSC_LINK'], env['WIN_CSC_LINK']];
    };
    expect(signing('macos')).toEqual(['apple-cert', '']);
    expect(signing('windows')).toEqual(['', 'windows-cert']);
    expect(signing('ubuntu')).toEqual(['', '']);
  });

  it('publishes a Release only on a v* tag, after every build, with write access for that job alone', () => {
    expect(release.needs).toBe('dist');
    expect(release.if).toBe("startsWith(github.ref, 'refs/tags/v')");
    expect(release.permissions).toEqual({ contents: 'write' });
    const gate: Step = { if: release.if! };
    expect(stepRuns(gate, contexts(undefined, `v${version}`))).toBe(true);
    expect(stepRuns(gate, { ...contexts(undefined, ''), github: { ref: 'refs/heads/main' } })).toBe(false);
  });

  it('its shell steps, the matrix expanded as GitHub does, exit 0 on a tag that matches package.json; the release gets every installer and SHA256SUMS', () => {
    const tag = `v${version}`;
    const ran: string[] = [];
    for (const entry of matrix) {
      const { root, env } = workspace([entry]);
      for (const step of job.steps) {
        if (
          step.run === undefined ||
          NOT_RUN_HERE[stepName(step)] !== undefined ||
          !stepRuns(step, contexts(entry, tag))
        )
          continue;
        const run = runStep(step, contexts(entry, tag), root, env);
        expect(run.status, `${entry.os}: ${stepName(step)}\n${run.stderr}`).toBe(0);
        ran.push(`${entry.os}: ${stepName(step)}`);
        if (step.name?.startsWith('Sizes')) {
          const listed = run.stdout
            .trim()
            .split('\n')
            .map((line) => line.split('\t')[1]);
          expect(listed).toEqual([
            entry.unpacked,
            ...entry.artifacts
              .trim()
              .split('\n')
              .map((pattern) => pattern.replace('*', `Sluice-${version}-${entry.os}`)),
          ]);
        }
      }
    }
    expect(ran).toEqual(
      expect.arrayContaining([
        'ubuntu-24.04: Sizes (installed app and installers)',
        'macos-14: Apple notarisation key',
        "windows-2022: The tag names package.json's version",
      ]),
    );

    // The release job, after download-artifact merged every job's installers into installers/.
    const { root, env, installers } = workspace(matrix);
    mkdirSync(join(root, 'installers'));
    for (const file of installers)
      writeFileSync(join(root, 'installers', file.replace('dist/', '')), readFileSync(join(root, file)));
    for (const step of release.steps) {
      if (step.run === undefined) continue;
      const run = runStep(step, contexts(undefined, tag), root, env);
      expect(run.status, `release: ${stepName(step)}\n${run.stderr}`).toBe(0);
    }
    const sums = readFileSync(join(root, 'installers', 'SHA256SUMS'), 'utf8');
    expect(
      sums
        .trim()
        .split('\n')
        .map((line) => line.split(/\s+\*?/)[1])
        .sort(),
    ).toEqual(installers.map((file) => file.replace('dist/', '')).sort());
    const gh = readFileSync(join(env['RUNNER_TEMP']!, 'gh-args'), 'utf8').trim().split('\n');
    expect(gh.slice(0, 3)).toEqual(['release', 'create', tag]);
    expect(gh.filter((arg) => arg.startsWith('installers/')).sort()).toEqual(
      readdirSync(join(root, 'installers'))
        .map((file) => `installers/${file}`)
        .sort(),
    );
    expect(gh).toContain('installers/SHA256SUMS');
  });

  it('a tag that does not name package.json’s version fails before anything is built', () => {
    const check = job.steps.find((step) => step.name === "The tag names package.json's version")!;
    const entry = matrix[0]!;
    expect(job.steps.indexOf(check)).toBeLessThan(job.steps.findIndex((step) => step.run === '${{ matrix.test }}'));
    const { root, env } = workspace([entry]);
    const run = runStep(check, contexts(entry, 'v9.9.9'), root, env);
    expect(run.status).toBe(1);
    expect(run.stdout).toContain(`Tag v9.9.9 does not match package.json's version ${version} (want v${version}).`);
    expect(stepRuns(check, { ...contexts(entry, ''), github: { ref: 'refs/heads/main' } })).toBe(false);
  });
});
