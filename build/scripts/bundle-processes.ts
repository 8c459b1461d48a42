/**
 * Bundles each program Sluice starts as a process (node/process-entries.ts) from what tsc built
 * in out/run/, and writes out/run/bundles.json: the modules each bundle holds, which
 * test/architecture/helper-closure.test.ts holds to the layer rules (root's bundle holds only
 * root's layers). Rolldown is Vite's own bundler, already installed with it.
 *
 * Each program is bundled on its own, so no file in out/run/ is shared by two of them: root loads
 * only the helper's. Their lazily imported parts stay lazy, as chunks named after the program.
 * Node's built-ins stay imports, and so do packages but the few in BUNDLED_PACKAGES: a native addon
 * or a package's own files stay where the package expects them.
 */
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';
import { PROCESS_ENTRIES, type ProcessName } from '../../node/process-entries.js';
import { packageName } from './package-name.js';

/** Where the bundles go: one directory below out/, as node/process-entries.ts expects. */
export const RUN_DIR = resolve('out/run');
export const MANIFEST = resolve(RUN_DIR, 'bundles.json');

/** For each bundle, the paths (from out/: tsc's .js, and ../node_modules/ for a bundled package) of the modules it holds. */
export type BundleManifest = Record<ProcessName, string[]>;

/**
 * Pure-JavaScript packages on a program's start-up path, bundled with it (with the packages they
 * import) because importing them took longer than their code does once bundled: fast-xml-parser
 * 26-27 ms unbundled and 4-6 ms bundled (the probe reads a block map with it), yaml 22-25 ms (the
 * probe loads it for any image with a boot partition), valibot 6-9 ms (every program checks its
 * messages with it). The rest stay imports: drivelist and koffi are native addons; udif,
 * xz-decompress and unixcrypt load only for a dmg, a built-in xz decoder or a customisation.
 */
export const BUNDLED_PACKAGES = ['fast-xml-parser', 'yaml', 'valibot'] as const;

const NODE_MODULES = `${sep}node_modules${sep}`;

/**
 * Whether a bare import stays an import: yes unless it names a bundled package or a package
 * imports it (only a bundled package's files are ever in a bundle, so that is one of theirs).
 */
function staysImport(id: string, importer: string): boolean {
  if (id.startsWith('node:')) return true;
  return !importer.includes(NODE_MODULES) && !(BUNDLED_PACKAGES as readonly string[]).includes(packageName(id));
}

async function bundle(name: ProcessName): Promise<string[]> {
  const output = await build({
    input: { [name]: resolve('out', PROCESS_ENTRIES[name]) },
    platform: 'node',
    // Sluice's own relative imports are bundled, and BUNDLED_PACKAGES; any other bare specifier (a package, node:*) is left to Node.
    external: (id, importer) =>
      importer !== undefined && !id.startsWith('.') && !isAbsolute(id) && staysImport(id, importer),
    logLevel: 'warn',
    write: true,
    output: {
      dir: RUN_DIR,
      format: 'esm',
      entryFileNames: '[name].js',
      chunkFileNames: `${name}-[name]-[hash].js`,
      sourcemap: true,
    },
  });
  const modules = output.output.flatMap((file) => (file.type === 'chunk' ? file.moduleIds : []));
  return modules.map((id) => relative(resolve('out'), id).split('\\').join('/')).sort();
}

export async function bundleProcesses(): Promise<BundleManifest> {
  rmSync(RUN_DIR, { recursive: true, force: true });
  mkdirSync(RUN_DIR, { recursive: true });
  const manifest = {} as BundleManifest;
  for (const name of Object.keys(PROCESS_ENTRIES) as ProcessName[]) manifest[name] = await bundle(name);
  writeFileSync(MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`);
  // package.json "bin": npm links the command to it.
  chmodSync(resolve(RUN_DIR, 'sluice.js'), 0o755);
  return manifest;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundleProcesses();
