/**
 * The three ways the channel (and, where the elevation tool passes no descriptor, the image or a
 * backup's bytes) reaches the helper, behind one interface, so the launch (launch.ts) does not
 * branch on them:
 * - inherited: the helper is a direct child; the channel is a socket pair on its fd 3;
 * - fifo: FIFOs in a 0700 directory the app made (sudo, pkexec close fds above 2; osascript
 *   passes none, so the image goes through a FIFO too), see channel-dir.ts;
 * - named-pipe: Windows' UAC passes nothing; the app serves two named pipes, see pipe-servers.ts.
 */
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import type { ChannelStreams } from '../../node/channel.js';
import type { HelperTransport } from '../../node/helper-command-line.js';
import type { Elevation, LaunchedProcess } from './elevation/types.js';
import { copyImage } from './image-feed.js';
import { ByteSource } from '../../node/byte-source.js';

export interface LaunchTransport {
  /** What the helper's command line says of it. */
  readonly helperArgs: HelperTransport;
  /** The launched process's descriptors past stderr: the socket on fd 3 for a direct child. */
  readonly extraStdio: readonly 'pipe'[];
  /** The channel's streams once the helper has connected; null when it never does. */
  streams(child: LaunchedProcess): Promise<ChannelStreams | null>;
  /**
   * Passes the image to the helper where the elevation tool passes no descriptor (after the
   * helper said it was ready); resolves with the error that kept it from the helper, null
   * otherwise. `stop` ends the wait for a helper that never opens its end.
   */
  feedImage(source: number | Readable, stop: AbortSignal): Promise<Error | null>;
  /**
   * A backup where the elevation tool passes no descriptor: the drive's bytes as the helper sends
   * them (the image FIFO, the image named pipe), once it has connected; null when it never does
   * before `stop` (it has exited). Null where the image does not travel through the transport.
   */
  backupBytes: ((stop: AbortSignal) => Promise<ByteSource | null>) | null;
  /** Closes the app's ends and deletes what the transport made. */
  close(): Promise<void>;
}

const NOTHING_TO_PASS = Promise.resolve(null);

function inherited(): LaunchTransport {
  return {
    helperArgs: { kind: 'inherited' },
    extraStdio: ['pipe'],
    streams: (child) => Promise.resolve({ input: child.stdio[3] as Socket, output: child.stdio[3] as Socket }),
    feedImage: () => NOTHING_TO_PASS,
    backupBytes: null,
    close: () => Promise.resolve(),
  };
}

async function fifo(imageThroughChannel: boolean): Promise<LaunchTransport> {
  const { createChannelDir } = await import('./channel-dir.js');
  const dir = await createChannelDir(imageThroughChannel);
  return {
    helperArgs: { kind: 'fifo', dir: dir.dir, imageFifo: imageThroughChannel },
    extraStdio: [],
    streams: () => Promise.resolve(dir.streams),
    feedImage: (source, stop) => (imageThroughChannel ? dir.feedImage(source, stop) : NOTHING_TO_PASS),
    backupBytes: imageThroughChannel
      ? async (stop) => {
          const fd = await dir.openImageForReading(stop);
          return fd === null ? null : new ByteSource(fd);
        }
      : null,
    close: () => dir.remove(),
  };
}

async function namedPipe(imageThroughChannel: boolean): Promise<LaunchTransport> {
  const { createPipeServers, newPipeName } = await import('./pipe-servers.js');
  const name = newPipeName();
  const pipes = createPipeServers(name, imageThroughChannel);
  return {
    helperArgs: { kind: 'named-pipe', name },
    extraStdio: [],
    streams: () => pipes.control,
    feedImage: async (source) => {
      const socket = await (pipes.image ?? Promise.resolve(null));
      return socket === null ? null : copyImage(source, socket);
    },
    backupBytes: async (stop) => {
      if (pipes.image === null) return null;
      const helperGone = new Promise<null>((resolve) =>
        stop.aborted ? resolve(null) : stop.addEventListener('abort', () => resolve(null), { once: true }),
      );
      const socket = await Promise.race([pipes.image, helperGone]);
      return socket === null ? null : new ByteSource(socket);
    },
    close: async () => pipes.close(),
  };
}

/**
 * How a decoder hands its image over for a helper started through `elevation` (see
 * user/images/processes/decoder-launch.ts DecoderOutput): its socket as the helper's fd 0 where the tool
 * passes descriptors (a helper started directly, without `elevation`, among them), else a stream
 * this process reads and copies into the channel.
 */
export function decoderOutputFor(elevation: Elevation | undefined): 'stream' | 'relayed' {
  return (elevation?.passesStdin ?? true) ? 'stream' : 'relayed';
}

/**
 * Whether `cards` cards read one decoded copy of the image as it grows (openSourceFeed's
 * decodeOnce): only where the helper gets the copy's own descriptor (`output` 'stream'), since it
 * reads a growing file at offsets, which a relayed stream (the sudo broker, osascript, UAC) has none of.
 */
export function readsOneDecodedCopy(cards: number, output: 'stream' | 'relayed'): boolean {
  return cards > 1 && output === 'stream';
}

/**
 * The transport `elevation` needs; throws when it cannot be set up. Each transport loads its own
 * module when chosen: the named pipes' node:crypto alone took 9 ms to load, for Windows only.
 */
export async function createTransport(elevation: Elevation): Promise<LaunchTransport> {
  const imageThroughChannel = !elevation.passesStdin;
  switch (elevation.channel) {
    case 'inherited':
      return inherited();
    case 'fifo':
      return fifo(imageThroughChannel);
    case 'named-pipe':
      return namedPipe(imageThroughChannel);
  }
}
