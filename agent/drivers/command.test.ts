import { describe, expect, it } from 'vitest';
import { createCommandRunner } from './command.js';

const node = process.execPath;

describe('the command runner', () => {
  it('sets a call’s variables over the runner’s environment, for that call only', async () => {
    const run = createCommandRunner({
      env: { ...process.env, SIMLOCK_A: 'base', SIMLOCK_B: 'base' },
    });
    const print = [
      node,
      '-e',
      'process.stdout.write(`${process.env.SIMLOCK_A} ${process.env.SIMLOCK_B}`)',
    ] as const;
    expect((await run(print, { env: { SIMLOCK_B: 'call' } })).stdout).toBe('base call');
    expect((await run(print)).stdout).toBe('base base');
  });

  it('writes the input to stdin and closes it, so a tool reading to the end returns', async () => {
    const run = createCommandRunner();
    const echo = [
      node,
      '-e',
      'let s = ""; process.stdin.on("data", (d) => (s += d)); process.stdin.on("end", () => process.stdout.write(`[${s}]`));',
    ] as const;
    expect(await run(echo, { input: 'no\n', timeoutMs: 20_000 })).toEqual({
      exitCode: 0,
      stdout: '[no\n]',
      stderr: '',
    });
  });

  it('does not fail when the tool exits without reading its input', async () => {
    const run = createCommandRunner();
    const result = await run([node, '-e', 'process.exit(3)'], { input: 'x'.repeat(1 << 20) });
    expect(result.exitCode).toBe(3);
  });
});
