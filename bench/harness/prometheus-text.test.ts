import { describe, expect, it } from 'vitest';
import { samplesOf } from './prometheus-text.js';

describe('samplesOf', () => {
  it('reads the samples of one metric with their labels, and no other metric', () => {
    const text = [
      '# HELP apiserver_terminated_watchers_total Counter of watchers closed',
      'apiserver_terminated_watchers_total{group="simlock.dev",resource="leases"} 3',
      'apiserver_terminated_watchers_total{group="",resource="podtemplates"} 1',
      'apiserver_terminated_watchers_total_other{resource="x"} 9',
    ].join('\n');
    expect(samplesOf(text, 'apiserver_terminated_watchers_total')).toEqual([
      { labels: { group: 'simlock.dev', resource: 'leases' }, value: 3 },
      { labels: { group: '', resource: 'podtemplates' }, value: 1 },
    ]);
  });
});
