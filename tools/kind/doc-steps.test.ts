import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DocStepsError, docSteps, fencedBlocks, missingLines } from './doc-steps.js';

const page = [
  '# Title',
  '',
  '```sh step=first',
  'echo one',
  '',
  'echo two',
  '```',
  '',
  'What it prints:',
  '',
  '```text step=first',
  'one',
  'two',
  '```',
  '',
  '```sh',
  'echo not a step',
  '```',
  '',
  '- in a list:',
  '',
  '  ```sh step=second',
  '  cat <<EOF',
  '    indented',
  '  EOF',
  '  ```',
  '',
  '````sh step=third',
  '```',
  'a fence inside',
  '```',
  '````',
].join('\n');

describe('docSteps', () => {
  it('answers the sh blocks marked with a step, in order, with the output shown for them', () => {
    expect(docSteps(page)).toEqual([
      { id: 'first', commands: 'echo one\n\necho two', shown: 'one\ntwo', line: 3 },
      { id: 'second', commands: 'cat <<EOF\n  indented\nEOF', line: 22 },
      { id: 'third', commands: '```\na fence inside\n```', line: 28 },
    ]);
  });

  it.each([
    [
      'a step named twice',
      '```sh step=a\nx\n```\n```sh step=a\ny\n```',
      'line 4, step a: the step is also at line 1',
    ],
    [
      'output before its step',
      '```text step=a\nx\n```\n```sh step=a\ny\n```',
      "line 1, step a: output shown before the step's commands",
    ],
    [
      'output shown twice',
      '```sh step=a\nx\n```\n```text step=a\n1\n```\n```text step=a\n2\n```',
      'line 7, step a: output shown twice',
    ],
    [
      'another language',
      '```bash step=a\nx\n```',
      'line 1, step a: a step is `sh`, its output `text` (not bash)',
    ],
    ['a bad id', '```sh step=A_1\nx\n```', 'line 1, step A_1: not a step id (a-z, 0-9 and -)'],
    ['an unclosed block', 'text\n```sh step=a\nx\n', 'line 2: a fenced block is never closed'],
  ])('refuses %s', (_case, markdown, message) => {
    expect(() => docSteps(markdown)).toThrow(new DocStepsError(message));
  });

  it('reads docs/INSTALL.md: the kind path is steps, each run by the kind tier', () => {
    const install = readFileSync(new URL('../../docs/INSTALL.md', import.meta.url), 'utf8');
    const steps = docSteps(install);
    // The kind tier (e2e/kind/install.test.ts) runs exactly these, in this order.
    expect(steps.map((step) => step.id)).toEqual([
      'setup',
      'cluster',
      'install',
      'check',
      'agents',
      'user',
      'leases',
      'waiting',
      'failover',
      'upgrade',
      'uninstall',
      'delete-cluster',
    ]);
    for (const step of steps) expect(step.commands.trim(), step.id).not.toBe('');
  });
});

describe('fencedBlocks', () => {
  it('keeps a ``` line inside a ~~~ block, and skips inline code that opens with backticks', () => {
    const blocks = fencedBlocks('~~~text\n```\n~~~\n```js `x` ```\n');
    expect(blocks).toEqual([{ info: 'text', text: '```', line: 1 }]);
  });
});

describe('missingLines', () => {
  const output = 'Lease sim-1: iPhone 16 on mac-mini-1   \nRequest ipad-1: waiting 12s\n';
  it('matches strings to whole lines (trailing blanks aside) and patterns to any line', () => {
    expect(
      missingLines(output, [
        'Lease sim-1: iPhone 16 on mac-mini-1',
        /^Request ipad-1: waiting \d+s$/,
        'Lease sim-1',
        /^Lease emulator-1/,
      ]),
    ).toEqual(['Lease sim-1', /^Lease emulator-1/]);
  });
});
