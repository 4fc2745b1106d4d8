import { describe, expect, it } from 'vitest';
import { FeedState } from './feed.js';

describe('FeedState', () => {
  it('is syncing until each watch lists, failing from an error until it lists again', async () => {
    let changes = 0;
    const state = new FeedState(
      { namespace: 'team-a', hidden: ['You may not list workers.simlock.dev.'], unwatched: [] },
      () => (changes += 1),
    );
    const leases = state.watch('Leases in team-a');
    const requests = state.watch('LeaseRequests in team-a');
    expect(state.feed()).toEqual({
      namespace: 'team-a',
      hidden: ['You may not list workers.simlock.dev.'],
      unwatched: [],
      syncing: ['Leases in team-a', 'LeaseRequests in team-a'],
      failing: [],
    });
    leases.listed();
    requests.failed(new Error('leaserequests.simlock.dev is forbidden'));
    await Promise.all([leases.settled, requests.settled]);
    const failing = state.feed().failing;
    expect(state.feed().syncing).toEqual([]);
    expect(failing).toMatchObject([
      { what: 'LeaseRequests in team-a', error: 'leaserequests.simlock.dev is forbidden' },
    ]);
    // A second failure keeps when the failing began.
    requests.failed(new Error('connect ECONNREFUSED'));
    expect(state.feed().failing[0]?.since).toBe(failing[0]?.since);
    expect(state.feed().failing[0]?.error).toBe('connect ECONNREFUSED');
    requests.listed();
    expect(state.feed().failing).toEqual([]);
    // Each change is told once; the same state again is not news.
    leases.listed();
    expect(changes).toBe(4);
  });
});
