import type { DownloadProgress } from '../../common/contracts/ipc-contract.js';
import type { SourceFeed } from '../../user/images/feed/source-feed.js';
import { PROGRESS_INTERVAL_MS } from '../../writer/progress-meter.js';

/**
 * Reports a flash's download apart from its writing, so the progress screen shows which of the two
 * is the slower: the bytes the decoder has read from the server, and what it said when it resumed
 * after a drop. Returns what stops it (the flash ended).
 */
export function reportDownload(
  feed: SourceFeed,
  bytesTotal: number | null,
  report: (download: DownloadProgress) => void,
): () => void {
  const started = performance.now();
  let notice: string | null = null;
  let stopped = false;
  feed.onNotice((message) => {
    notice = message;
  });
  const send = () => {
    const bytesDone = feed.sourceBytes();
    const seconds = (performance.now() - started) / 1000;
    report({ bytesDone, bytesTotal, speed: seconds > 0 ? bytesDone / seconds : 0, notice });
  };
  // As often as the writer reports its own progress: 4 a second is enough for a line of text.
  const timer = setInterval(send, PROGRESS_INTERVAL_MS);
  return () => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    send();
  };
}
