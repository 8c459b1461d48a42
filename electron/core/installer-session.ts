/**
 * An installer stick made by the app: the builder process (user/installer/process/main.ts) reads
 * the ISO and lays the stick out as the user, and this side starts the helper with the ranges it
 * sent and the pipe it writes the stick into. Main parses nothing from the ISO.
 */
import type { ChildProcess } from 'node:child_process';
import * as v from 'valibot';
import { ok, refuse, refused, type ApiResult } from '../../common/contracts/api-result.js';
import type { FlashRequest } from '../../common/contracts/app-models.js';
import type { ImageInfo } from '../../common/domain/image.js';
import { InstallerMessage, type InstallerRequest } from '../../common/contracts/installer-protocol.js';
import type { Drive } from '../../common/domain/drive.js';
import { jobError, type Failure } from '../../common/domain/failure.js';
import type { TargetResult } from '../../common/domain/result.js';
import { closeFd } from '../../node/io.js';
import { createOsPipe, type OsPipe } from '../../node/os-pipe.js';
import { processEntry } from '../../node/process-entries.js';
import { spawnImageChild } from '../../user/images/processes/image-child.js';
import { stickJob } from '../../user/installer/stick-job.js';
import type { LaunchedHelper } from '../../user/launcher/launch.js';
import { runDesktopJob, type JobSession } from './desktop-job.js';
import type { SessionDeps } from './flash-session.js';
import type { FlashPieces } from './flash-start.js';

/** The builder's heap: its tables are the ISO's tree (a Windows ISO's 1,000 files, a DVD's 5,000 packages). */
const BUILDER_FLAGS = ['--max-old-space-size=256', '--max-semi-space-size=1'];

type Plan = Extract<InstallerMessage, { type: 'plan' }>;

interface Builder {
  child: ChildProcess;
  pipe: OsPipe;
  /** Its messages after the plan, checked; a builder that exits without its end fails the job. */
  next(): Promise<InstallerMessage>;
}

function startBuilder(request: InstallerRequest, pipe: OsPipe): Builder {
  const child = spawnImageChild(
    processEntry('installer'),
    BUILDER_FLAGS,
    [],
    ['ignore', 'ignore', 'ignore', 'ipc', pipe.writeFd],
  );
  const queue: InstallerMessage[] = [];
  let wake: (() => void) | null = null;
  let gone = false;
  child.on('message', (message: unknown) => {
    const checked = v.safeParse(InstallerMessage, message);
    queue.push(
      checked.success
        ? checked.output
        : {
            type: 'failed',
            code: 'protocol-error',
            message: 'The installer builder sent a message Sluice does not know.',
          },
    );
    wake?.();
  });
  child.on('exit', () => {
    gone = true;
    wake?.();
  });
  child.on('error', () => {
    gone = true;
    wake?.();
  });
  child.send(request);
  const next = async (): Promise<InstallerMessage> => {
    while (queue.length === 0 && !gone) await new Promise<void>((resolve) => (wake = resolve));
    return (
      queue.shift() ?? {
        type: 'failed',
        code: 'source-read-error',
        message: 'The process that reads the ISO stopped without finishing the stick.',
      }
    );
  };
  return { child, pipe, next };
}

/**
 * Starts the builder for `iso` and `drive` and waits for its plan; a Failure (nothing written)
 * when it could not make one (the ISO is damaged, a file FAT32 cannot hold, no splitter).
 */
export async function planInstaller(iso: string, drive: Drive): Promise<{ builder: Builder; plan: Plan } | Failure> {
  if (drive.size === null) return jobError('target-not-found', 'The drive holds no medium.').failure;
  const pipe = await createOsPipe();
  const builder = startBuilder(
    { type: 'build', iso, driveBytes: drive.size, sectorBytes: drive.logicalBlockSize as 512 },
    pipe,
  );
  // The builder holds its own copy of the write end.
  await closeFd(pipe.writeFd);
  const first = await builder.next();
  if (first.type === 'plan') return { builder, plan: first };
  builder.child.kill('SIGKILL');
  await closeFd(pipe.readFd);
  if (first.type === 'failed') return { code: first.code, message: first.message };
  return { code: 'protocol-error', message: 'The installer builder sent bytes before their ranges.' };
}

/** Runs the stick's helper job with the desktop effects around it. */
export function startInstallerSession(
  drive: Drive,
  planned: { builder: Builder; plan: Plan },
  options: { verify: boolean; eject: boolean; notify: boolean },
  deps: SessionDeps,
): JobSession {
  const { builder, plan } = planned;
  let helper: LaunchedHelper | null = null;
  const write = async (): Promise<TargetResult[]> => {
    const job = stickJob(drive, { driveBytes: drive.size ?? 0, extents: plan.extents }, options);
    helper = deps.launch({ source: builder.pipe.readFd, job, onProgress: deps.onProgress });
    const launched = helper;
    void builder.next().then((end) =>
      launched.endSource(
        end.type === 'end'
          ? { ok: true, bytes: end.bytes }
          : {
              ok: false,
              failure:
                end.type === 'failed'
                  ? { code: end.code, message: end.message }
                  : { code: 'protocol-error', message: 'The installer builder sent a second plan.' },
            },
      ),
    );
    try {
      return await launched.result;
    } finally {
      // Open until the job ends: a helper that gets no descriptor of ours is fed through this one.
      await closeFd(builder.pipe.readFd);
      if (builder.child.exitCode === null) builder.child.kill('SIGKILL');
    }
  };
  const cancel = () => {
    helper?.cancel();
    builder.child.kill('SIGKILL');
  };
  return { kind: 'flash', cancel, done: runDesktopJob({ kind: 'flash', ...options }, deps.effects, write) };
}

/**
 * An installer stick of the chosen ISO's files on the request's one drive, or why not. `claim`
 * uses the drive's typed name up (or refuses): called right before the launch, once nothing else
 * can refuse.
 */
export async function startInstaller(
  pieces: Pick<FlashPieces, 'runner' | 'drives' | 'settings' | 'session'>,
  request: FlashRequest,
  image: ImageInfo,
  claim: () => ApiResult<never> | null,
): Promise<ApiResult<null>> {
  const drive = pieces.drives.judged().find((d) => d.device === request.targets[0]);
  if (request.targets.length !== 1 || drive === undefined || (request.customise ?? null) !== null)
    return refuse('invalid-request', 'An installer stick is made on one drive at a time, without customisation.');
  const planned = await planInstaller(image.source, drive);
  if ('code' in planned) return refused({ ...planned, message: `${planned.message} Nothing was written.` });
  const busy = pieces.runner.busy() ?? claim();
  if (busy !== null) {
    planned.builder.child.kill('SIGKILL');
    await closeFd(planned.builder.pipe.readFd);
    return busy;
  }
  const { verify, eject, notifications } = pieces.settings.get();
  pieces.runner.run(startInstallerSession(drive, planned, { verify, eject, notify: notifications }, pieces.session));
  return ok(null);
}
