import { describe, expect, it } from 'vitest';
import type { SideResult } from './measure.js';
import { parseOptions } from './options.js';
import { summarize, type RunResult } from './summary.js';

function side(perSecond: number, extra: Partial<SideResult> = {}): SideResult {
  return {
    ms: 1000,
    done: 100,
    perSecond,
    writes: {},
    writesPerItem: 3,
    cpu: { 'kube-apiserver': 1 },
    loadAverage: 2,
    ...extra,
  };
}

describe('summarize', () => {
  const size = { workers: 10, requests: 100 };
  const run = (index: number, sides: RunResult['sides']): RunResult => ({
    size,
    qps: 0,
    run: index,
    sides,
  });

  it('takes medians per side and divides grants/s by each other side', () => {
    const rows = summarize(
      [
        run(0, { simlock: side(10), dra: side(20, { doubleAllocations: 0 }), scheduler: side(40) }),
        run(1, { simlock: side(30), dra: side(10, { doubleAllocations: 1 }), scheduler: side(50) }),
        run(2, { simlock: side(20), dra: side(30, { doubleAllocations: 0 }), scheduler: side(60) }),
      ],
      [size],
      [0],
    );
    expect(rows).toHaveLength(1);
    const row = rows[0];
    expect(row?.sides.simlock?.perSecond).toBe(20);
    expect(row?.sides.dra?.perSecond).toBe(20);
    expect(row?.sides.dra?.doubleAllocations).toBe(1);
    expect(row?.sides.scheduler?.apiserverMsPerItem).toBe(10);
    expect(row?.ratios.dra).toBe(1);
    expect(row?.ratios.scheduler).toBe(0.4);
    expect(row?.ratios.kueue).toBeUndefined();
  });

  it('counts runs that timed out', () => {
    const rows = summarize([run(0, { kwok: side(5, { unfinished: true }) })], [size], [0]);
    expect(rows[0]?.sides.kwok?.unfinishedRuns).toBe(1);
  });
});

describe('parseOptions', () => {
  it('runs every side by default', () => {
    expect([...parseOptions([]).sides]).toEqual([
      'scheduler',
      'dra',
      'dra-preset-finalizer',
      'kwok',
      'kueue',
      'simlock',
    ]);
  });

  it('refuses a side it does not know', () => {
    expect(() => parseOptions(['--sides', 'simlock,kubelet'])).toThrow(/unknown side kubelet/);
  });

  it('passes name=value pairs to the controller as flags, and refuses anything else', () => {
    expect(parseOptions([]).controllerArgs).toEqual([]);
    expect(
      parseOptions(['--controller-args', 'dispatch-event-hold-ms=1000,reason-write-interval-ms=0'])
        .controllerArgs,
    ).toEqual(['--dispatch-event-hold-ms', '1000', '--reason-write-interval-ms', '0']);
    expect(() => parseOptions(['--controller-args', 'dispatch-event-hold-ms'])).toThrow(
      /name=value pairs, not dispatch-event-hold-ms/,
    );
  });

  it('stands each stage idle only when asked, for whole seconds', () => {
    expect(parseOptions([]).idleSeconds).toBe(0);
    expect(parseOptions(['--idle-s', '20']).idleSeconds).toBe(20);
    expect(() => parseOptions(['--idle-s', 'soon'])).toThrow(/--idle-s/);
  });
});
