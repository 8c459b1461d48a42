import { expect, it } from 'vitest';
import { parseFirstBootReport } from '../../../user/customise/first-boot-report.js';

it('reads each step of a report, and what a failed one said', () => {
  expect(
    parseFirstBootReport(
      'Sluice first boot: 2026-11-29T04:02:11Z\napplied hostname\nFAILED keymap (exit status 1; see the journal)\n',
    ),
  ).toEqual({
    ranAt: '2026-11-29T04:02:11Z',
    steps: [
      { step: 'hostname', applied: true, detail: null },
      { step: 'keymap', applied: false, detail: 'exit status 1; see the journal' },
    ],
  });
});

it('refuses what firstrun.sh does not write: another heading, a line it does not know, a name too long', () => {
  expect(parseFirstBootReport('first boot\napplied hostname\n')).toBeNull();
  expect(parseFirstBootReport('Sluice first boot: now\napplied hostname\nrm -rf /\n')).toBeNull();
  expect(parseFirstBootReport(`Sluice first boot: now\napplied ${'x'.repeat(40)}\n`)).toBeNull();
  expect(parseFirstBootReport('')).toBeNull();
});

it('looks at no more lines than a report has room for, and refuses a longer one: a step past the cut could have failed', () => {
  const lines = (n: number) => Array.from({ length: n }, () => 'applied hostname\n').join('');
  expect(parseFirstBootReport(`Sluice first boot: now\n${lines(64)}`)?.steps).toHaveLength(64);
  expect(parseFirstBootReport(`Sluice first boot: now\n${lines(64)}FAILED keymap\n`)).toBeNull();
  expect(parseFirstBootReport(`Sluice first boot: now\n${lines(10_000)}`)).toBeNull();
});
