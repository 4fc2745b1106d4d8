// The agent's events split into frames however the chunks fall, and its LEASE_LOST told apart.
// What the proxy then says, with the request's reason, is tested end to end in e2e/exec-end.test.ts.
import { describe, expect, it } from 'vitest';
import { leaseLostMessage, sseFrame } from '../api/index.js';
import { isLeaseLostFrame, SseFrames } from './lease-end.js';

describe('SseFrames', () => {
  it('gives whole frames however the chunks are cut, multi-byte characters included', () => {
    const stream = Buffer.from(
      sseFrame('output', { stream: 'stdout', data: 'prix: 5 €\n\n' }) +
        sseFrame('exit', { exitCode: 0 }),
    );
    for (let cut = 1; cut < stream.length; cut++) {
      const frames = new SseFrames();
      const got = [...frames.push(stream.subarray(0, cut)), ...frames.push(stream.subarray(cut))];
      expect(got.map((frame) => `${frame}\n\n`).join('')).toBe(stream.toString());
      expect(frames.rest()).toBe('');
    }
  });

  it('keeps a frame cut short for the end', () => {
    const frames = new SseFrames();
    expect(frames.push(Buffer.from('event: output\ndata: {"str'))).toEqual([]);
    expect(frames.rest()).toBe('event: output\ndata: {"str');
  });
});

describe('isLeaseLostFrame', () => {
  const frame = (text: string) => text.slice(0, -2);
  it('is the agent’s LEASE_LOST error, and nothing else', () => {
    const message = leaseLostMessage('team-a/ci-1', 'its device is being reclaimed');
    expect(isLeaseLostFrame(frame(sseFrame('error', { code: 'LEASE_LOST', message })))).toBe(true);
    expect(isLeaseLostFrame(frame(sseFrame('error', { code: 'EXEC_TIMEOUT', message })))).toBe(
      false,
    );
    expect(
      isLeaseLostFrame(frame(sseFrame('output', { stream: 'stdout', data: 'LEASE_LOST' }))),
    ).toBe(false);
    expect(isLeaseLostFrame('event: error\ndata: {not json')).toBe(false);
  });
});
