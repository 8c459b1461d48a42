import { BROKER_ENV, type BrokerReply, type BrokerRequest } from '../../../common/contracts/broker-protocol.js';
import { RelayedProcess } from './relayed-process.js';
import type { Elevation, LaunchCommand, LaunchedProcess } from './types.js';

/**
 * `sudo sluice …` and `pkexec sluice …`: this command line runs as the user who asked, and its
 * root parent (cli/broker.ts) starts each helper on its request, as pkexec would: through the
 * channel directory's FIFOs, which this process makes. Root's spawn passes no descriptor of ours,
 * so the image (or a backup's bytes) goes through the channel's image FIFO, as with osascript.
 */

/** Whether root started this process as the broker's user side, with the broker on its IPC channel. */
export function brokerAvailable(): boolean {
  return process.env[BROKER_ENV] === '1' && process.send !== undefined;
}

const running = new Map<number, RelayedProcess>();
let lastId = 0;

function send(request: BrokerRequest): void {
  process.send?.(request);
}

function onReply(message: unknown): void {
  const reply = message as BrokerReply;
  const helper = running.get(reply.id);
  if (helper === undefined) return;
  if (reply.type === 'exit') running.delete(reply.id);
  // The channel keeps this process alive only while a helper runs: the command line ends as it would without sudo.
  if (running.size === 0) process.channel?.unref();
  helper.reply(reply);
}

function launchThroughBroker(command: LaunchCommand): LaunchedProcess {
  if (running.size === 0 && lastId === 0) process.on('message', onReply);
  const id = ++lastId;
  const helper = new RelayedProcess(() => send({ type: 'kill', id }));
  running.set(id, helper);
  process.channel?.ref();
  send({ type: 'launch', id, file: command.file, args: command.args });
  return helper;
}

export const brokerLaunch: Elevation = {
  name: 'broker',
  channel: 'fifo',
  passesStdin: false,
  command: (program, args) => ({ file: program, args: [...args] }),
  // The user said yes to sudo already; a launch the broker refuses is no denial but a command line it would not run, which its stderr says.
  denial: () => null,
  launch: launchThroughBroker,
};
