// sameJson answers what comparing canonical JSON answers, without building the text: the
// controller decides with it whether a request's status needs writing.
import { describe, expect, it } from 'vitest';
import { canonicalJson, sameJson } from './view-key.js';

const reasons = (count: number, changedAt?: number) =>
  Array.from({ length: count }, (_, index) => ({
    worker: `w-${index}`,
    reason: index === changedAt ? 'drained' : 'full',
    capacityReason: index === changedAt ? undefined : 'platform-running-limit',
  }));

const pairs: [string, unknown, unknown][] = [
  ['the same status', { phase: 'Waiting', position: 3 }, { phase: 'Waiting', position: 3 }],
  ['keys in another order', { a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 }],
  ['an undefined member against none', { a: 1, b: undefined }, { a: 1 }],
  ['none against an undefined member', { a: 1 }, { a: 1, b: undefined }],
  ['another position', { phase: 'Waiting', position: 3 }, { phase: 'Waiting', position: 4 }],
  ['a member more', { a: 1 }, { a: 1, b: 2 }],
  ['a member fewer', { a: 1, b: 2 }, { a: 1 }],
  ['a member null against absent', { a: 1, b: null }, { a: 1 }],
  ['an array against an object', { a: [] }, { a: {} }],
  ['arrays of another length', [1, 2], [1, 2, 3]],
  ['arrays in another order', [1, 2], [2, 1]],
  ['a number against its text', { a: 1 }, { a: '1' }],
  ['a thousand equal reasons', { workers: reasons(1000) }, { workers: reasons(1000) }],
  ['one reason of a thousand changed', { workers: reasons(1000) }, { workers: reasons(1000, 999) }],
];

describe('sameJson', () => {
  it.each(pairs)('agrees with canonical JSON: %s', (_, a, b) => {
    expect(sameJson(a, b)).toBe(canonicalJson(a) === canonicalJson(b));
  });

  it('tells apart what a status write must not miss', () => {
    expect(sameJson({ phase: 'Waiting', position: 1 }, { phase: 'Waiting', position: 2 })).toBe(
      false,
    );
    expect(sameJson({ workers: reasons(1000) }, { workers: reasons(1000, 500) })).toBe(false);
    expect(sameJson({ workers: reasons(3) }, { workers: reasons(3) })).toBe(true);
  });
});
