import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { usageMessageOf } from '../test/simlock-errors.js';
import { parseGlobals } from './flags.js';
import { connect } from './options.js';

// Nothing here is contacted: a connection is only the kubeconfig read and applied.
const kubeconfig = join(mkdtempSync(join(tmpdir(), 'simlock-cli-')), 'kubeconfig');
writeFileSync(
  kubeconfig,
  `apiVersion: v1
kind: Config
clusters:
- name: one
  cluster: {server: "https://one.example:6443"}
- name: two
  cluster: {server: "https://two.example:6443"}
users:
- name: alice
  user: {token: a}
- name: bob
  user: {token: b}
contexts:
- name: team
  context: {cluster: one, user: alice, namespace: team-a}
- name: bare
  context: {cluster: two, user: bob}
current-context: team
`,
);

function session(flags: Record<string, unknown>) {
  return connect(parseGlobals({ kubeconfig, ...flags }));
}

const usage = (flags: Record<string, unknown>): string => usageMessageOf(() => session(flags));

describe('connect', () => {
  it("works in the context's namespace by default", () => {
    const { namespace, listNamespace, client } = session({});
    expect([namespace, listNamespace, client.server]).toEqual([
      'team-a',
      'team-a',
      'https://one.example:6443',
    ]);
  });

  it('falls back to default when the context names no namespace', () => {
    expect(session({ context: 'bare' }).namespace).toBe('default');
  });

  it('takes -n over the context, and lists every namespace with -A', () => {
    expect(session({ namespace: 'other' }).namespace).toBe('other');
    expect(session({ allNamespaces: true }).listNamespace).toBeUndefined();
  });

  it('swaps the cluster or the user with --cluster and --user', () => {
    const swapped = session({ cluster: 'two', user: 'bob' });
    expect(swapped.client.server).toBe('https://two.example:6443');
    expect(swapped.client.user).toBe('bob');
    expect(swapped.namespace).toBe('team-a');
  });

  it('refuses names the kubeconfig does not have, naming the flag', () => {
    expect(usage({ context: 'nope' })).toBe('--context: context "nope" is not in the kubeconfig');
    expect(usage({ cluster: 'nope' })).toBe('--cluster: cluster "nope" is not in the kubeconfig');
    expect(usage({ user: 'nope' })).toBe('--user: user "nope" is not in the kubeconfig');
  });

  it('sets the per-request timeout from --request-timeout', () => {
    expect(session({ requestTimeout: '5s' }).requestTimeoutMs).toBe(5000);
    expect(session({}).requestTimeoutMs).toBe(30_000);
  });
});
