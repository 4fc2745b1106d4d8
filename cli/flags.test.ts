import { describe, expect, it } from 'vitest';
import { SimlockError } from '../api/index.js';
import { parseGlobals, rejectOutput } from './flags.js';

function usageMessage(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof SimlockError && error.code === 'USAGE') return error.message;
    throw error;
  }
  throw new Error('expected a usage error');
}

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
    expect(
      parseGlobals({
        kubeconfig: '/tmp/k',
        context: 'dev',
        cluster: 'c',
        user: 'u',
        namespace: 'team-a',
        allNamespaces: true,
        output: 'yaml',
        noHeaders: true,
        requestTimeout: '0',
        simlockNamespace: 'simlock',
      }),
    ).toEqual({
      kubeconfig: '/tmp/k',
      context: 'dev',
      cluster: 'c',
      user: 'u',
      namespace: 'team-a',
      allNamespaces: true,
      output: 'yaml',
      noHeaders: true,
      requestTimeout: 0,
      simlockNamespace: 'simlock',
    });
  });

  it.each([
    [{ output: 'table' }, '-o/--output: must be one of json, yaml, wide, name'],
    [{ namespace: 'Team_A' }, '-n/--namespace: must be a DNS label'],
    [{ requestTimeout: 'later' }, '--request-timeout: "later" is not a duration'],
    [{ kubeconfig: '' }, '--kubeconfig: '],
  ])('refuse %j, naming the flag', (argv, message) => {
    expect(usageMessage(() => parseGlobals(argv))).toContain(message);
  });

  it('refuse an output format a command does not print', () => {
    expect(
      usageMessage(() => rejectOutput(parseGlobals({ output: 'json' }), ['name'], 'release')),
    ).toBe('-o/--output: release prints name');
  });
});
