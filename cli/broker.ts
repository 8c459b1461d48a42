/**
 * `sudo sluice …` and `pkexec sluice …` (and any root start that names the user who asked):
 * root keeps only the part that must be root. This process starts the real command line at once
 * as that user (their uid and gid, no supplementary groups, their HOME), and afterwards does one
 * thing: on that process's request, start a helper exactly as pkexec would, with the command line
 * the user side would have given pkexec, checked here first and again by the helper itself. So
 * every path the user names (images, file targets, backups, the station log, the cache,
 * catalogues, settings, customisation files) is opened with the user's rights, and a job of any
 * kind, the station's per-card helpers included, runs unchanged through the FIFO transport.
 *
 * Why a broker rather than dropping root in-process after starting the helper: the station starts
 * its helpers later, one per card, and a flash of a download starts its helper only once the
 * image is probed, so root would have to stay until then. The price is one more Node start before
 * the command runs (about 0.1-0.3 s, docs/security.md); the user's passwd entry (getent) is a
 * small part of it.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { lstatSync } from 'node:fs';
import * as v from 'valibot';
import { BROKER_ENV, BROKER_REFUSED, BrokerRequest, type BrokerReply } from '../common/contracts/broker-protocol.js';
import { errorText } from '../common/domain/error-details.js';
import { parseHelperArgv } from '../node/helper-command-line.js';
import { builtHelperProgram } from '../user/launcher/helper-program.js';

/**
 * The only PATH root's processes look tools up in (getent here; umount, partx and the like in the
 * helper): sudo may keep the user's PATH where no secure_path is set, and a tool found there would
 * run as root. The same as pkexec's.
 */
const ROOT_PATH = '/usr/sbin:/usr/bin:/sbin:/bin';

interface InvokingUser {
  uid: number;
  gid: number;
  name: string;
  home: string;
}

/** The passwd entry of `uid` (through NSS, so directory users count too), or null. */
function passwdEntry(uid: number): { name: string; gid: number; home: string } | null {
  try {
    const [name, , , gid, , home] = execFileSync('getent', ['passwd', String(uid)], {
      encoding: 'utf8',
      timeout: 5000,
      env: { PATH: ROOT_PATH },
    })
      .trim()
      .split(':');
    if (name === undefined || home === undefined || !Number.isSafeInteger(Number(gid))) return null;
    return { name, gid: Number(gid), home };
  } catch {
    return null;
  }
}

/** Who asked for root: sudo's SUDO_UID/SUDO_GID, or pkexec's PKEXEC_UID (its group from the user's entry). Null when root on its own. */
export function invokingUserOfRoot(env: NodeJS.ProcessEnv): InvokingUser | null {
  if (process.getuid?.() !== 0) return null;
  const uid = Number(env['SUDO_UID'] ?? env['PKEXEC_UID']);
  if (!Number.isSafeInteger(uid) || uid <= 0) return null;
  const entry = passwdEntry(uid);
  if (entry === null) return null;
  const gid = env['SUDO_UID'] !== undefined ? Number(env['SUDO_GID']) : entry.gid;
  if (!Number.isSafeInteger(gid) || gid < 0) return null;
  return { uid, gid, name: entry.name, home: entry.home };
}

/** The user's environment: this one without the elevation tool's own variables, with their HOME and name. */
function userEnv(user: InvokingUser): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: user.home,
    USER: user.name,
    LOGNAME: user.name,
    [BROKER_ENV]: '1',
  };
  for (const name of ['SUDO_UID', 'SUDO_GID', 'SUDO_USER', 'SUDO_COMMAND', 'PKEXEC_UID']) delete env[name];
  return env;
}

/**
 * Why `request` is not a helper this broker starts, or null. The program must be the helper root
 * itself would run; its command line must parse as the helper's, with the FIFO transport in a
 * directory of the user's that nobody else may enter (parseHelperArgv refuses control characters
 * in its name), and the user side as the parent the helper watches.
 */
function refusal(
  request: Extract<BrokerRequest, { type: 'launch' }>,
  user: InvokingUser,
  userPid: number,
): string | null {
  const program = builtHelperProgram();
  const prefix = [program.file, ...program.args];
  const given = [request.file, ...request.args];
  if (prefix.some((part, i) => given[i] !== part)) return `it is not ${prefix.join(' ')}`;
  let args;
  try {
    args = parseHelperArgv(given.slice(prefix.length));
  } catch (error) {
    return errorText(error);
  }
  if (args.transport.kind !== 'fifo') return 'its channel is not a directory of FIFOs';
  const { dir } = args.transport;
  if (args.parentPid !== userPid) return `it would watch process ${args.parentPid ?? 'none'}, not ${userPid}`;
  try {
    const st = lstatSync(dir);
    if (!st.isDirectory() || st.uid !== user.uid || (st.mode & 0o077) !== 0)
      return `${dir} is not a directory only uid ${user.uid} may enter`;
  } catch (error) {
    return errorText(error);
  }
  return null;
}

/** Starts the helper `request` names, after the checks above; its stderr and exit go back as replies. */
function launchHelper(
  request: Extract<BrokerRequest, { type: 'launch' }>,
  user: InvokingUser,
  userSide: ChildProcess,
  helpers: Map<number, ChildProcess>,
): void {
  const reply = (message: BrokerReply) => void (userSide.connected && userSide.send(message));
  const refused = helpers.has(request.id) ? 'its id is in use' : refusal(request, user, userSide.pid ?? -1);
  if (refused !== null) {
    reply({ type: 'stderr', id: request.id, text: `sluice: root refused to start the helper: ${refused}\n` });
    return reply({ type: 'exit', id: request.id, code: BROKER_REFUSED, signal: null });
  }
  const program = builtHelperProgram();
  // As pkexec does: a reset environment that names the user, whose channel the helper checks is theirs.
  const env = { PATH: ROOT_PATH, ...program.env, SUDO_UID: String(user.uid), SUDO_GID: String(user.gid) };
  const helper = spawn(request.file, request.args, { stdio: ['ignore', 'ignore', 'pipe'], env });
  helpers.set(request.id, helper);
  helper.stderr?.setEncoding('utf8').on('data', (text: string) => reply({ type: 'stderr', id: request.id, text }));
  helper.on('error', (error) => reply({ type: 'stderr', id: request.id, text: `${error.message}\n` }));
  helper.on('close', (code, signal) => {
    helpers.delete(request.id);
    reply({ type: 'exit', id: request.id, code, signal });
  });
}

/** Runs this same command line as `user`, and starts helpers on its request until it ends; exits as it does. */
export function runBroker(user: InvokingUser): void {
  const userSide = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: userEnv(user),
    uid: user.uid,
    gid: user.gid,
  });
  const helpers = new Map<number, ChildProcess>();
  userSide.on('message', (raw) => {
    const parsed = v.safeParse(BrokerRequest, raw);
    if (!parsed.success) return;
    const request = parsed.output;
    if (request.type === 'launch') launchHelper(request, user, userSide, helpers);
    else helpers.get(request.id)?.kill('SIGTERM');
  });
  // Ctrl-C reaches the user side and the helpers through the terminal; other signals are passed on.
  process.on('SIGINT', () => undefined);
  for (const signal of ['SIGTERM', 'SIGHUP'] as const) process.on(signal, () => userSide.kill(signal));
  userSide.on('error', (error) => {
    process.stderr.write(`sluice: could not start as ${user.name}: ${error.message}\n`);
    process.exitCode = 1;
  });
  userSide.on('exit', (code, signal) => {
    if (signal === null) process.exitCode = code ?? 1;
    else {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    }
  });
}

const user = invokingUserOfRoot(process.env);
if (user === null) await import('./main.js');
else runBroker(user);
