import { describe, expect, it } from 'vitest';
import { ImageHandOff } from '../../../electron/core/image-hand-off.js';

function handOff() {
  const notes: string[] = [];
  const opened: string[] = [];
  const hand = new ImageHandOff({ platform: 'linux', appInArguments: false }, (line) => void notes.push(line));
  return { hand, notes, opened, open: (path: string) => void opened.push(path) };
}

describe('images handed over by the system, on their way to the page', () => {
  it('hold what arrives before the page is ready and give it over when it is', () => {
    const { hand, opened, open } = handOff();
    hand.openCommandLine(['/opt/Sluice/sluice', '--no-sandbox', 'file:///home/ann/os.img'], '/home/ann');
    expect(opened).toEqual([]);
    hand.connect(open);
    expect(opened).toEqual(['/home/ann/os.img']);
  });

  it('hold only the latest: Sluice writes one image, and the last one asked for is the one meant', () => {
    const { hand, opened, open } = handOff();
    hand.openFile('/Users/ann/first.img');
    hand.openCommandLine(['/usr/bin/sluice', 'second.img', 'third.img'], '/home/ann');
    hand.connect(open);
    expect(opened).toEqual(['/home/ann/third.img']);
  });

  it('give over at once once the page listens, and hand nothing twice', () => {
    const { hand, opened, open } = handOff();
    hand.connect(open);
    expect(opened).toEqual([]);
    hand.openFile('/Users/ann/a.img');
    hand.openCommandLine(['/usr/bin/sluice', 'b.img'], '/tmp');
    expect(opened).toEqual(['/Users/ann/a.img', '/tmp/b.img']);
    // A reloaded page says it is ready again: nothing is held, nothing is repeated.
    hand.connect(open);
    expect(opened).toHaveLength(2);
  });

  it('leave a command line without files alone: a second start with no file only brings the window forward', () => {
    const { hand, opened, open } = handOff();
    hand.openFile('/Users/ann/a.img');
    hand.openCommandLine(['/opt/Sluice/sluice', '--no-sandbox'], '/');
    hand.connect(open);
    expect(opened).toEqual(['/Users/ann/a.img']);
  });

  it('say which arguments it will not open, one line each, and still open the files among them', () => {
    const { hand, notes, opened, open } = handOff();
    hand.connect(open);
    hand.openCommandLine(['/usr/bin/sluice', 'https://example.org/os.img.xz', '/srv/os.img'], '/');
    expect(opened).toEqual(['/srv/os.img']);
    expect(notes).toEqual([
      'sluice: not opening https://example.org/os.img.xz: Sluice opens image files on this computer. Download it first, then open the file.',
    ]);
  });
});
