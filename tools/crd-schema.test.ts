import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { crdSchema } from './crd-schema.js';

describe('crdSchema', () => {
  it('turns a string-or-integer union into int-or-string', () => {
    expect(
      crdSchema(z.object({ value: z.union([z.string(), z.number().int()]) })).properties,
    ).toEqual({
      value: { 'x-kubernetes-int-or-string': true },
    });
  });

  it('refuses any other union, which a structural schema cannot hold', () => {
    expect(() => crdSchema(z.object({ value: z.union([z.string(), z.boolean()]) }))).toThrow(
      /flatten it/,
    );
  });

  it('drops the safe-integer range zod writes on every integer but keeps real bounds', () => {
    expect(crdSchema(z.object({ n: z.number().int().min(1) })).properties).toEqual({
      n: { type: 'integer', minimum: 1 },
    });
  });

  it('keeps x-kubernetes metadata given with meta()', () => {
    const schema = z.array(z.object({ k: z.string() })).meta({ 'x-kubernetes-list-type': 'map' });
    expect(crdSchema(schema)['x-kubernetes-list-type']).toBe('map');
  });
});
