import { errorText } from '../../common/domain/error-details.js';
import { stationLogCsv } from '../../common/domain/station.js';
import { readStationLog } from '../../user/station/station-log.js';
import { EXIT } from '../exit-codes.js';

/** `sluice station-csv LOG`: a station's JSON Lines log as CSV on stdout, for a spreadsheet. */
export async function stationCsvCommand(path: string): Promise<number> {
  let read;
  try {
    read = await readStationLog(path);
  } catch (error) {
    process.stderr.write(`sluice: cannot read the station log ${path}: ${errorText(error)}\n`);
    return EXIT.failed;
  }
  if (read.partial > 0)
    process.stderr.write(
      `sluice: the last line of ${path} was cut short (the station was stopped while writing it) and is left out.\n`,
    );
  process.stdout.write(stationLogCsv(read.entries));
  return EXIT.ok;
}
