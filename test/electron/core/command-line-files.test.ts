import { describe, expect, it } from 'vitest';
import { filesFromCommandLine, type CommandLineContext } from '../../../electron/core/command-line-files.js';

const linux: CommandLineContext = { platform: 'linux', workingDirectory: '/home/ann/Downloads', appInArguments: false };
const windows: CommandLineContext = {
  platform: 'win32',
  workingDirectory: 'C:\\Users\\Ann\\Downloads',
  appInArguments: false,
};
const files = (argv: string[], context: CommandLineContext) => filesFromCommandLine(argv, context).files;

describe('the files a command line asks Sluice to open', () => {
  it('none when Sluice is started from its menu entry or icon', () => {
    expect(filesFromCommandLine(['/opt/Sluice/sluice'], linux)).toEqual({ files: [], notLocal: [] });
    expect(files(['C:\\Program Files\\Sluice\\Sluice.exe'], windows)).toEqual([]);
  });

  it('never the executable itself, even when it looks like an image path', () => {
    expect(files(['/home/ann/sluice.img'], linux)).toEqual([]);
  });

  it('an Explorer double-click on Windows: the quoted %1 path, and the switches Chromium adds for a second instance are skipped', () => {
    expect(files(['C:\\Program Files\\Sluice\\Sluice.exe', 'D:\\Images\\raspios lite.img'], windows)).toEqual([
      'D:\\Images\\raspios lite.img',
    ]);
    // What the running Sluice receives from a second one: Chromium's switches first, then the arguments.
    const secondInstance = [
      'C:\\Program Files\\Sluice\\Sluice.exe',
      '--allow-file-access-from-files',
      '--original-process-start-time=13397071565946128',
      'D:\\Images\\os.img',
    ];
    expect(files(secondInstance, windows)).toEqual(['D:\\Images\\os.img']);
    expect(files(['C:\\Sluice.exe', '\\\\nas\\images\\os.img'], windows)).toEqual(['\\\\nas\\images\\os.img']);
  });

  it('Windows relative paths against the working directory the command ran in, with Windows rules on any host', () => {
    expect(files(['Sluice.exe', 'os.img'], windows)).toEqual(['C:\\Users\\Ann\\Downloads\\os.img']);
    expect(files(['Sluice.exe', '..\\os.img'], windows)).toEqual(['C:\\Users\\Ann\\os.img']);
    expect(files(['Sluice.exe', 'C:/Images/os.img'], windows)).toEqual(['C:\\Images\\os.img']);
  });

  it("a Linux desktop file's %U: file:// URLs become paths, percent-decoded; the AppImage's --no-sandbox is skipped", () => {
    const argv = ['/tmp/.mount_SluiceXYZ/sluice', '--no-sandbox', 'file:///home/ann/My%20Images/r%C3%A9seau.img'];
    expect(files(argv, linux)).toEqual(['/home/ann/My Images/réseau.img']);
    expect(files(['/opt/Sluice/sluice', 'FILE://localhost/srv/os.iso'], linux)).toEqual(['/srv/os.iso']);
  });

  it('Windows file URLs, drive letters and UNC shares', () => {
    expect(files(['Sluice.exe', 'file:///D:/Images/os%20lite.img'], windows)).toEqual(['D:\\Images\\os lite.img']);
    expect(files(['Sluice.exe', 'file://nas/images/os.img'], windows)).toEqual(['\\\\nas\\images\\os.img']);
  });

  it("relative paths against the working directory given, not the process's own", () => {
    expect(files(['/usr/bin/sluice', 'os.img', '../iso/debian.iso', './-dash.img'], linux)).toEqual([
      '/home/ann/Downloads/os.img',
      '/home/ann/iso/debian.iso',
      '/home/ann/Downloads/-dash.img',
    ]);
    expect(files(['/usr/bin/sluice', 'os.img'], { ...linux, workingDirectory: '/mnt/usb' })).toEqual([
      '/mnt/usb/os.img',
    ]);
  });

  it('skips every switch wherever it stands, and empty arguments', () => {
    const argv = [
      '/opt/Sluice/sluice',
      '--enable-features=UseOzonePlatform',
      'a.img',
      '--ozone-platform=wayland',
      '',
      '-psn_0_123456',
      'b.img',
    ];
    expect(files(argv, linux)).toEqual(['/home/ann/Downloads/a.img', '/home/ann/Downloads/b.img']);
  });

  it('run by Electron from the project (`electron .`, `npm start -- x.img`): the first non-switch argument is the app, not a file', () => {
    const dev = { ...linux, workingDirectory: '/src/sluice', appInArguments: true };
    expect(files(['/src/sluice/node_modules/electron/dist/electron', '/src/sluice', 'os.img'], dev)).toEqual([
      '/src/sluice/os.img',
    ]);
    // A second instance's argv, reordered by Chromium: the switches move, the app stays the first argument.
    expect(files(['electron', '--allow-file-access-from-files', '.', '/images/os.img'], dev)).toEqual([
      '/images/os.img',
    ]);
    expect(files(['electron', '.'], dev)).toEqual([]);
  });

  it('names, rather than opens, what is not a file on this computer', () => {
    const argv = [
      '/opt/Sluice/sluice',
      'https://downloads.example.org/os.img.xz',
      'file://nas/images/os.img',
      'smb://nas/os.img',
      'image:v2.img',
    ];
    expect(filesFromCommandLine(argv, linux)).toEqual({
      // A colon without // is part of a file name on Linux.
      files: ['/home/ann/Downloads/image:v2.img'],
      notLocal: ['https://downloads.example.org/os.img.xz', 'file://nas/images/os.img', 'smb://nas/os.img'],
    });
  });
});
