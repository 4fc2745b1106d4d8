// A merge patch from one status to the next: what went away is cleared with null.
import { describe, expect, it } from 'vitest';
import { mergePatch } from './merge-patch.js';

describe('mergePatch', () => {
  it('sends every field of the next object, and null for each one that went away', () => {
    expect(
      mergePatch({ phase: 'Waiting', position: 3, workers: [] }, { phase: 'Granted' }),
    ).toEqual({ phase: 'Granted', position: null, workers: null });
  });

  it('sends the next object as it is when there was none before', () => {
    expect(mergePatch(undefined, { phase: 'Pending' })).toEqual({ phase: 'Pending' });
  });
});
