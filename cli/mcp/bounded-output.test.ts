import { describe, expect, it } from 'vitest';
import { BoundedOutput } from './bounded-output.js';

describe('BoundedOutput', () => {
  it('keeps output within the limit whole', () => {
    const output = new BoundedOutput(16);
    output.append('hello ');
    output.append('world');
    expect(output.text('stdout')).toBe('hello world');
    expect(output.cutBytes).toBe(0);
  });

  it('keeps the first and last half of a longer output and says how much was cut', () => {
    const output = new BoundedOutput(10);
    for (const chunk of ['abc', 'defgh', 'ijklmnop', 'qrstuvwxyz']) output.append(chunk);
    expect(output.totalBytes).toBe(26);
    expect(output.cutBytes).toBe(16);
    expect(output.text('stdout')).toBe(
      'abcde\n[simlock: 16 of 26 bytes of stdout cut here]\nvwxyz',
    );
  });

  it('cuts a 10 MB output to the limit, its end kept', () => {
    const output = new BoundedOutput(64 * 1024);
    const line = 'x'.repeat(1023) + '\n';
    for (let i = 0; i < 10_000; i += 1) output.append(line);
    const text = output.text('stderr');
    expect(output.totalBytes).toBe(10_240_000);
    expect(text).toContain(
      `[simlock: ${10_240_000 - 65_536} of 10240000 bytes of stderr cut here]`,
    );
    expect(Buffer.byteLength(text)).toBeLessThan(65_536 + 100);
    expect(text.endsWith('x\n')).toBe(true);
  });
});
