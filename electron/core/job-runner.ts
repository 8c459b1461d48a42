import { refuse, type ApiResult } from '../../common/contracts/api-result.js';
import type { JobEnd } from '../../common/contracts/app-models.js';
import { errorText } from '../../common/domain/error-details.js';
import type { AppJobKind } from '../../common/contracts/app-models.js';
import type { JobSession } from './desktop-job.js';

const JOB_RUNNING = 'Sluice is already flashing or backing up a drive; wait for it to end.';

/**
 * The app's one job at a time: which job runs, the starts still being checked, a cancel that came
 * while one was, and whether the app is closing. Every "busy" answer is given here.
 */
export class JobRunner {
  private session: JobSession | null = null;
  /** Starts under way (their checks run before the job exists). */
  private starting = 0;
  /** The page showed its progress screen at once, and Cancel on it came before the job existed. */
  private cancelWhileStarting = false;
  private closing = false;

  constructor(
    /** Where a job's end goes (the page's jobEnd event, after the app's own bookkeeping). */
    private readonly ended: (end: JobEnd) => void,
  ) {}

  /** The kind of job running, or null. */
  running(): AppJobKind | null {
    return this.session?.kind ?? null;
  }

  /** The answer for a request that cannot be taken while a job runs, or null when none does. */
  busy(): ApiResult<never> | null {
    return this.session === null ? null : refuse('busy', JOB_RUNNING);
  }

  /** Runs the checks of a start with the app marked as starting, so a cancel meanwhile is kept; refused once closing. */
  async whileStarting(start: () => Promise<ApiResult<null>>): Promise<ApiResult<null>> {
    if (this.closing) return refuse('busy', 'Sluice is closing.');
    this.starting += 1;
    try {
      const result = await start();
      if (!result.ok) this.cancelWhileStarting = false;
      return result;
    } finally {
      this.starting -= 1;
    }
  }

  /** Makes `session` the running job; a cancel that came while it was being started is applied now. */
  run(session: JobSession): void {
    this.session = session;
    if (this.cancelWhileStarting) session.cancel();
    this.cancelWhileStarting = false;
    // A session's end never rejects; were it to, the app must not stay busy for good.
    const noEnd = (error: unknown): JobEnd => {
      process.stderr.write(`sluice: a ${session.kind} ended without a result: ${errorText(error)}\n`);
      return { kind: session.kind, results: [], verify: false, seconds: 0 };
    };
    void session.done.catch(noEnd).then((end) => {
      this.session = null;
      this.ended(end);
    });
  }

  /** Asks the running job to stop (or the one being started, once it runs). */
  cancel(): ApiResult<null> {
    if (this.session === null && this.starting > 0) {
      this.cancelWhileStarting = true;
      return { ok: true, value: null };
    }
    if (this.session === null) return refuse('no-job', 'Nothing is running.');
    this.session.cancel();
    return { ok: true, value: null };
  }

  /** Cancels the running job, if any, and waits until the helper has stopped and closed the device. */
  async cancelAndWait(): Promise<void> {
    const running = this.session;
    if (running === null) return;
    running.cancel();
    await running.done;
  }

  /** No start is taken from now on; a running job is cancelled and waited for. */
  async close(): Promise<void> {
    this.closing = true;
    await this.cancelAndWait();
  }
}
