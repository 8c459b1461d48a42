import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import type { LaunchedProcess } from './types.js';

/** How a relayed helper's root parent speaks of it: a piece of its stderr, or its exit. */
export type RelayedReply =
  { type: 'stderr'; text: string } | { type: 'exit'; code: number | null; signal: string | null };

/**
 * A helper that a root process started on this process's request (the broker of `sudo sluice`,
 * or an armed station's root side): a stand-in for its ChildProcess, fed with the replies that
 * carry its stderr and its exit. `kill` asks that root process to stop it.
 */
export class RelayedProcess extends EventEmitter implements LaunchedProcess {
  readonly stderr = new PassThrough();
  readonly stdio = [null, null, this.stderr];

  constructor(private readonly requestKill: () => void) {
    super();
  }

  kill(): boolean {
    this.requestKill();
    return true;
  }

  reply(message: RelayedReply): void {
    if (message.type === 'stderr') return void this.stderr.write(message.text);
    this.stderr.end();
    // After the stderr that came before the exit has been read by the launcher.
    setImmediate(() => this.emit('close', message.code, message.signal));
  }
}
