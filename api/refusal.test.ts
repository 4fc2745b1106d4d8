// A refusal is read off a Lease an agent wrote: whatever it holds, parseRefusal never throws, and
// answers one of three kinds, ignoring what the contract does not allow (a capacity reason outside
// the four reads as plain full; an unreadable refusal as INVALID).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CAPACITY_REASONS } from './reasons.js';
import { CANNOT_SERVE_CODES } from './errors.js';
import { parseRefusal } from './refusal.js';

const anyValue = fc.oneof(fc.jsonValue(), fc.anything());
const code = fc.oneof(
  fc.constantFrom('NO_CAPACITY', ...CANNOT_SERVE_CODES, 'TIMEOUT', 'LOST', ''),
  fc.string({ maxLength: 80 }),
  anyValue,
);
const capacityReason = fc.oneof(fc.constantFrom(...CAPACITY_REASONS), fc.string(), anyValue);
const refusal = fc.record(
  { code, message: fc.oneof(fc.string({ maxLength: 1100 }), anyValue), capacityReason },
  { requiredKeys: [] },
);

describe('parseRefusal, fuzzed', () => {
  it('never throws and always answers a known kind with a message of at most 1024 characters', () => {
    fc.assert(
      fc.property(fc.oneof(anyValue, refusal), (raw) => {
        const checked = parseRefusal(raw);
        expect(['no-capacity', 'cannot-serve', 'other']).toContain(checked.kind);
        expect(typeof checked.message).toBe('string');
        expect(checked.message.length).toBeLessThanOrEqual(1024);
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps a capacity reason only when it is one of the four, with NO_CAPACITY', () => {
    fc.assert(
      fc.property(capacityReason, fc.string({ maxLength: 100 }), (reason, message) => {
        const checked = parseRefusal({ code: 'NO_CAPACITY', message, capacityReason: reason });
        if (typeof reason === 'string' && (CAPACITY_REASONS as readonly string[]).includes(reason))
          expect(checked).toEqual({ kind: 'no-capacity', capacityReason: reason, message });
        else if (checked.kind === 'no-capacity') expect(checked.capacityReason).toBeUndefined();
        // Anything else is a refusal that does not parse at all: unreadable, never a crash.
        else
          expect(checked).toEqual({
            kind: 'other',
            code: 'INVALID',
            message: 'unreadable refusal',
          });
      }),
      { numRuns: 1000 },
    );
  });

  it('reads each cannot-serve code as cannot-serve, and any other code as other', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 64 }), (text) => {
        const checked = parseRefusal({ code: text, message: 'm' });
        if ((CANNOT_SERVE_CODES as readonly string[]).includes(text))
          expect(checked.kind).toBe('cannot-serve');
        else if (text !== 'NO_CAPACITY')
          expect(checked).toEqual({ kind: 'other', code: text, message: 'm' });
      }),
    );
    for (const cannotServe of CANNOT_SERVE_CODES)
      expect(parseRefusal({ code: cannotServe })).toEqual({
        kind: 'cannot-serve',
        code: cannotServe,
        message: '',
      });
  });
});
