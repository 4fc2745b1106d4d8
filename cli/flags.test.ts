import { describe, expect, it } from 'vitest';
import { usageMessageOf } from '../test/simlock-errors.js';
import { parseGlobals, rejectOutput } from './flags.js';

describe('global flags', () => {
  it('default like kubectl: no namespace (the context’s), 30s per request, simlock-system', () => {
    expect(parseGlobals({})).toEqual({
      allNamespaces: false,
      noHeaders: false,
      requestTimeout: 30,
      simlockNamespace: 'simlock-system',
    });
  });

  it('read every flag', () => {
    const given = {
      kubeconfig: '/tmp/k',
      context: 'dev',
      cluster: 'c',
      user: 'u',
      namespace: 'team-a',
      allNamespaces: true,
      output: 'yaml',
      noHeaders: true,
      simlockNamespace: 'simlock',
    };
    // Each as given, and the request timeout as seconds.
    expect(parseGlobals({ ...given, requestTimeout: '0' })).toEqual({
      ...given,
      requestTimeout: 0,
    });
  });

  it.each([
    [{ output: 'table' }, '-o/--output: must be one of json, yaml, wide, name'],
    [{ namespace: 'Team_A' }, '-n/--namespace: must be a DNS label'],
    [{ requestTimeout: 'later' }, '--request-timeout: "later" is not a duration'],
    [{ kubeconfig: '' }, '--kubeconfig: '],
  ])('refuse %j, naming the flag', (argv, message) => {
    expect(usageMessageOf(() => parseGlobals(argv))).toContain(message);
  });

  it('refuse an output format a command does not print', () => {
    expect(
      usageMessageOf(() => rejectOutput(parseGlobals({ output: 'json' }), ['name'], 'release')),
    ).toBe('-o/--output: release prints name');
  });
});
