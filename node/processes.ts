import { errorCode } from '../common/domain/error-details.js';

/** Whether process `pid` exists (ours or not). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but is not ours to signal (cannot happen as root, but is still "alive").
    return errorCode(error) === 'EPERM';
  }
}
