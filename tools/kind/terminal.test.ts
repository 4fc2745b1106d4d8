import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Terminal, failures, shellWord } from './terminal.js';

describe('Terminal', () => {
  let dir: string;
  let terminal: Terminal;
  let close: () => Promise<void>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'simlock-terminal-'));
    ({ terminal, close } = await Terminal.open(dir, {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GREETING: 'hello' },
    }));
  });
  afterAll(async () => {
    await close?.();
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps variables, functions and the folder from one step to the next, as a terminal does', async () => {
    const first = await terminal.run(
      'first',
      'NAME=${NAME:-world}\ngreet() { echo "$GREETING, $1"; }\nmkdir -p sub && cd sub\necho started',
      10_000,
    );
    expect(first).toEqual({ output: 'started\n', failures: [], exitCode: 0 });
    const second = await terminal.run('second', 'greet "$NAME"\nbasename "$PWD"', 10_000);
    expect(second.output).toBe('hello, world\nsub\n');
  });

  it('names each command that fails, and goes on with the next', async () => {
    const result = await terminal.run(
      'failing',
      'false\nls /nonexistent-simlock 2>/dev/null\nf() { return 3; }\nf\necho after',
      10_000,
    );
    expect(result.failures).toEqual([
      'exit 1: false',
      'exit 2: ls /nonexistent-simlock 2> /dev/null',
      'exit 3: return 3',
    ]);
    expect(result.output).toMatch(/after\n$/);
    expect(result.exitCode).toBe(0);
    // A command in a condition, or before || and &&, is not a failure.
    const tested = await terminal.run(
      'tested',
      'if false; then :; fi\nfalse || echo "exit $?"',
      10_000,
    );
    expect(tested).toEqual({ output: 'exit 1\n', failures: [], exitCode: 0 });
  });

  it('keeps a background job across steps, its pid in $!, until the terminal closes', async () => {
    await terminal.run('job', 'sleep 600 &\nJOB=$!', 10_000);
    const later = await terminal.run('later', 'kill -0 "$JOB" && jobs -pr | grep -c .', 10_000);
    expect(later).toEqual({ output: '1\n', failures: [], exitCode: 0 });
  });

  it('runs a step another Terminal of the same folder sends (another process, as the kind tier does)', async () => {
    const other = new Terminal(dir);
    expect((await other.run('other', 'echo "$NAME"', 10_000)).output).toBe('world\n');
  });

  it('gives up at the deadline with the output so far', async () => {
    await expect(terminal.run('slow', 'echo begun\nsleep 2', 500)).rejects.toThrow(
      'step slow did not end within 500 ms; its output so far:\nbegun\n',
    );
  });
});

describe('shellWord and failures', () => {
  it('quotes any text as one bash word', () => {
    expect(shellWord("it's a $HOME")).toBe(`'it'\\''s a $HOME'`);
  });
  it('reads the trap lines out of an output', () => {
    expect(failures('a\nterminal: exit 7: kubectl simlock simctl\nb\n')).toEqual([
      'exit 7: kubectl simlock simctl',
    ]);
  });
});
