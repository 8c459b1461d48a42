/**
 * Which processes keep a filesystem busy, found the way fuser(1) does: through each process's
 * /proc entries. Device numbers are compared rather than path prefixes, so a path that merely
 * looks like it is under a mountpoint (or one reached through a bind mount) is judged correctly.
 */
import { readFile, readdir, stat } from 'node:fs/promises';
import { devnoText } from './linux-sysfs.js';

export type HoldKind = 'working directory' | 'root directory' | 'open file' | 'mapped file' | 'open device';

/** A process keeping a filesystem busy. */
export interface Holder {
  pid: number;
  /** The program's name from /proc/PID/comm ("bash", "sleep"). */
  command: string;
  how: HoldKind;
  /** The device ("259:1") whose filesystem it holds. */
  devno: string;
}

/** The device numbers a process's memory maps are backed by; /proc/PID/maps prints them as "fd:01" in hex. */
export function mappedDevnos(maps: string): Set<string> {
  const devnos = new Set<string>();
  for (const line of maps.split('\n')) {
    const dev = line.split(/\s+/)[3];
    const match = dev === undefined ? null : /^([0-9a-f]+):([0-9a-f]+)$/.exec(dev);
    if (match?.[1] !== undefined && match[2] !== undefined && dev !== '00:00') {
      devnos.add(`${parseInt(match[1], 16)}:${parseInt(match[2], 16)}`);
    }
  }
  return devnos;
}

async function statDevno(path: string): Promise<{ dev: string; rdev: string | null } | null> {
  const st = await stat(path).catch(() => null);
  if (st === null) return null;
  return { dev: devnoText(st.dev), rdev: st.isBlockDevice() ? devnoText(st.rdev) : null };
}

/** How the process in `dir` (/proc/PID) holds one of `devnos`, or null. The process may exit meanwhile: that is null too. */
async function holdOf(dir: string, devnos: ReadonlySet<string>): Promise<{ how: HoldKind; devno: string } | null> {
  for (const [link, how] of [
    ['cwd', 'working directory'],
    ['root', 'root directory'],
  ] as const) {
    const st = await statDevno(`${dir}/${link}`);
    if (st !== null && devnos.has(st.dev)) return { how, devno: st.dev };
  }
  const fds = await readdir(`${dir}/fd`).catch(() => [] as string[]);
  for (const fd of fds) {
    const st = await statDevno(`${dir}/fd/${fd}`);
    if (st === null) continue;
    if (st.rdev !== null && devnos.has(st.rdev)) return { how: 'open device', devno: st.rdev };
    if (devnos.has(st.dev)) return { how: 'open file', devno: st.dev };
  }
  const maps = await readFile(`${dir}/maps`, 'utf8').catch(() => '');
  for (const devno of mappedDevnos(maps)) {
    if (devnos.has(devno)) return { how: 'mapped file', devno };
  }
  return null;
}

/** Every process (but this one) that keeps a filesystem on one of `devnos` ("major:minor") busy. */
export async function findHolders(devnos: ReadonlySet<string>): Promise<Holder[]> {
  const pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid);
  const holders: Holder[] = [];
  for (const pid of pids) {
    const dir = `/proc/${pid}`;
    const hold = await holdOf(dir, devnos);
    if (hold === null) continue;
    const command = (await readFile(`${dir}/comm`, 'utf8').catch(() => '?')).trim();
    holders.push({ pid: Number(pid), command, ...hold });
  }
  return holders.sort((a, b) => a.pid - b.pid);
}

const HOW: Record<HoldKind, string> = {
  'working directory': 'its working directory is inside it',
  'root directory': 'it runs chrooted inside it',
  'open file': 'it has a file open there',
  'mapped file': 'it has a file there mapped into memory',
  'open device': 'it has the partition itself open',
};

/** Shows at most this many programs by name; the rest are counted. */
const NAMED_HOLDERS = 3;

/** "sleep (pid 4242: its working directory is inside it)", and a count of the rest. */
export function describeHolders(holders: readonly Holder[]): string {
  const named = holders.slice(0, NAMED_HOLDERS).map((h) => `${h.command} (pid ${h.pid}: ${HOW[h.how]})`);
  const rest = holders.length - named.length;
  return rest > 0 ? `${named.join(', ')} and ${rest} more` : named.join(', ');
}
