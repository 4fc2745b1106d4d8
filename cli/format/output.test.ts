import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { asList, resourceName, serialise, toJson, withKind } from './output.js';

describe('-o json and -o yaml', () => {
  const items = [withKind('leaseRequest', { metadata: { name: 'r1' } })];

  it('prints a list as {apiVersion: v1, kind: List, items}, as kubectl does', () => {
    const printed = JSON.parse(serialise(asList(items), 'json') ?? '') as unknown;
    expect(printed).toEqual({
      apiVersion: 'v1',
      kind: 'List',
      metadata: { resourceVersion: '' },
      items: [
        { apiVersion: 'simlock.dev/v1alpha1', kind: 'LeaseRequest', metadata: { name: 'r1' } },
      ],
    });
  });

  it('indents JSON by four spaces', () => {
    expect(toJson({ a: 1 })).toBe('{\n    "a": 1\n}');
  });

  it('prints YAML that reads back as the same object', () => {
    expect(parse(serialise(asList(items), 'yaml') ?? '')).toEqual(asList(items));
  });

  it('leaves the other formats to the command', () => {
    expect(serialise(items, 'wide')).toBeUndefined();
    expect(serialise(items, 'name')).toBeUndefined();
    expect(serialise(items, undefined)).toBeUndefined();
  });

  it('keeps the kind the object has, filling only what list items lack', () => {
    expect(withKind('worker', { metadata: { name: 'w' } })).toMatchObject({ kind: 'Worker' });
  });
});

describe('-o name', () => {
  it('names objects as <singular>.<group>/<name>', () => {
    expect(resourceName('leaseRequest', 'r1')).toBe('leaserequest.simlock.dev/r1');
    expect(resourceName('lease', 'r1')).toBe('lease.simlock.dev/r1');
    expect(resourceName('worker', 'mac-1')).toBe('worker.simlock.dev/mac-1');
  });
});
