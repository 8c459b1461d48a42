import { filesFromCommandLine, type CommandLineContext } from './command-line-files.js';

/** Opens one handed-over image: the app service's way in (electron/core/app-service.ts). */
export type OpenImage = (path: string) => void;

/**
 * Images the operating system hands Sluice (a double-click, "Open with", a path on the command
 * line), on their way to the page. They can arrive before there is a page to show them: macOS
 * sends open-file before `ready` when a double-click starts Sluice, and the command line is there
 * from the first instant. Until the page says it listens, the image is held; after that, each one
 * goes through at once.
 *
 * Only the latest is held: Sluice writes one image at a time, so of several handed over in a row
 * the last is the one the user means, as when choosing twice in the file dialog.
 */
export class ImageHandOff {
  private held: string | null = null;
  private open: OpenImage | null = null;

  constructor(
    /** How this system's command lines read; each call names its own working directory. */
    private readonly commandLine: Omit<CommandLineContext, 'workingDirectory'>,
    /** One line for the user who typed an argument Sluice cannot open (stderr under Electron). */
    private readonly note: (line: string) => void,
  ) {}

  /** An absolute path the system asks Sluice to open (macOS's open-file). */
  openFile(path: string): void {
    if (this.open === null) this.held = path;
    else this.open(path);
  }

  /** A command line: Sluice's own at start, or a second instance's with its working directory (Windows, Linux). */
  openCommandLine(argv: readonly string[], workingDirectory: string): void {
    const { files, notLocal } = filesFromCommandLine(argv, { ...this.commandLine, workingDirectory });
    for (const argument of notLocal)
      this.note(
        `sluice: not opening ${argument}: Sluice opens image files on this computer. Download it first, then open the file.`,
      );
    const last = files.at(-1);
    if (last !== undefined) this.openFile(last);
  }

  /** The page listens for imageOpened: the held image goes to `open` now, later ones at once. A reloaded page connects again. */
  connect(open: OpenImage): void {
    this.open = open;
    const held = this.held;
    this.held = null;
    if (held !== null) open(held);
  }
}
