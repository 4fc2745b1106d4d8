// The proxy reads the caller's token from the Authorization header, which anyone can send: for any
// header it never throws, and it answers a token only for "Bearer <one word of at most 16 KiB>".
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bearerToken } from './auth.js';

const token = fc.stringMatching(/^[A-Za-z0-9._~+/=-]{1,200}$/);

describe('bearerToken, fuzzed', () => {
  it('never throws; a token it answers is one word, 1 to 16384 characters, from the header', () => {
    const header = fc.oneof(
      fc.string({ maxLength: 300 }),
      fc.string({ unit: 'binary', maxLength: 300 }),
      fc
        .tuple(
          fc.constantFrom('Bearer ', 'bearer ', 'BEARER\t', 'Basic ', 'Bearer', ''),
          fc.string(),
        )
        .map(([scheme, rest]) => scheme + rest),
      fc.constant(`Bearer ${'a'.repeat(16_385)}`),
      fc.constant(undefined),
    );
    fc.assert(
      fc.property(header, (value) => {
        const found = bearerToken(value);
        if (found === undefined) return;
        expect(found.length).toBeGreaterThan(0);
        expect(found.length).toBeLessThanOrEqual(16_384);
        expect(/\s/.test(found)).toBe(false);
        expect(value?.endsWith(found)).toBe(true);
        expect(/^bearer\s/i.test(value ?? '')).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it('reads a well-formed header, any case of the scheme, with any run of spaces', () => {
    fc.assert(
      fc.property(
        token,
        fc.constantFrom('Bearer', 'bearer', 'BEARER'),
        fc.integer({ min: 1, max: 4 }),
        (value, scheme, spaces) => {
          expect(bearerToken(`${scheme}${' '.repeat(spaces)}${value}`)).toBe(value);
        },
      ),
    );
  });

  it('answers nothing for a missing, empty, other-scheme or two-word header', () => {
    for (const header of [
      undefined,
      '',
      'Bearer',
      'Bearer ',
      'Basic abc',
      'Bearer a b',
      'Token abc',
    ])
      expect(bearerToken(header)).toBeUndefined();
  });
});
