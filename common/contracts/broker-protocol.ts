/**
 * The messages between `sudo sluice`'s root process (cli/broker.ts) and the command line it runs
 * as the invoking user (user/launcher/elevation/broker.ts), over the IPC channel root made when
 * it started that process. The user side asks for a helper with the command line it would have
 * given pkexec; root checks it as closely and answers with the helper's stderr and exit.
 */
import * as v from 'valibot';

/** Set in the environment of the command line root started: it has a broker on its IPC channel. */
export const BROKER_ENV = 'SLUICE_BROKER';

/** The exit status of a launch the broker refused: not the helper's (0-5), nor a signal's. */
export const BROKER_REFUSED = 77;

const LaunchId = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(Number.MAX_SAFE_INTEGER));
const Arg = v.pipe(v.string(), v.maxLength(4096));

export const BrokerRequest = v.variant('type', [
  /** Start `file args…`, which must be the helper root itself would start. */
  v.strictObject({ type: v.literal('launch'), id: LaunchId, file: Arg, args: v.pipe(v.array(Arg), v.maxLength(64)) }),
  /** Stop that helper (SIGTERM: the helper stops cleanly), as closing a pkexec prompt would. */
  v.strictObject({ type: v.literal('kill'), id: LaunchId }),
]);
export type BrokerRequest = v.InferOutput<typeof BrokerRequest>;

export type BrokerReply =
  | { type: 'stderr'; id: number; text: string }
  | { type: 'exit'; id: number; code: number | null; signal: string | null };
