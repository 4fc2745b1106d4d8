// The chart's console (console.enabled): off by default; on, a token-mode Deployment whose
// ServiceAccount may only watch and review (no write verb anywhere), accepted by the API server.
import { describe, expect, it } from 'vitest';
import { chartPath, helm, parseManifests, type KubeObject } from '../../test/cluster/helm.js';
import { useCluster } from '../../test/cluster/harness.js';

const cluster = useCluster('console-chart');

interface Rule {
  verbs: string[];
  resources?: string[];
}

async function render(args: string[]): Promise<{ text: string; objects: KubeObject[] }> {
  const rendered = await helm(['template', 'simlock', chartPath, '-n', cluster.namespace, ...args]);
  expect(rendered.exitCode, rendered.stderr).toBe(0);
  return { text: rendered.stdout, objects: parseManifests(rendered.stdout) };
}

describe('the chart with console.enabled', () => {
  it('renders no console by default, and a token-mode console with read-and-review RBAC when enabled', async () => {
    const plain = await render([]);
    expect(plain.objects.filter((object) => object.metadata.name.endsWith('-console'))).toEqual([]);

    const { text, objects } = await render(['--set', 'console.enabled=true']);
    const deployment = objects.find(
      (object) => object.kind === 'Deployment' && object.metadata.name === 'simlock-console',
    ) as { spec: { template: { spec: { containers: { args: string[] }[] } } } } | undefined;
    expect(deployment?.spec.template.spec.containers[0]?.args).toEqual([
      'console',
      '--mode=token',
      '--host=0.0.0.0',
      '--port=8080',
      `--simlock-namespace=${cluster.namespace}`,
      // The controller's own maximum, so that the console's "near its maximum" matches it.
      '--max-lease-duration=24h',
    ]);
    const roles = objects.filter(
      (object) => /Role$/.test(object.kind) && object.metadata.name.startsWith('simlock-console'),
    ) as unknown as { rules: Rule[] }[];
    const verbs = new Set(roles.flatMap((role) => role.rules.flatMap((rule) => rule.verbs)));
    expect([...verbs].sort()).toEqual(['create', 'get', 'list', 'watch']);
    const creates = roles.flatMap((role) =>
      role.rules.filter((rule) => rule.verbs.includes('create')),
    );
    expect(creates.flatMap((rule) => rule.resources).sort()).toEqual([
      'subjectaccessreviews',
      'tokenreviews',
    ]);

    // Every object is one the API server takes (a server-side dry run of the console's objects).
    const consoleOnly = objects.filter((object) => object.metadata.name.includes('console'));
    expect(consoleOnly.length).toBe(7);
    const applied = await cluster.kubectl(['apply', '--dry-run=server', '-f', '-'], {
      input: text
        .split(/^---$/m)
        .filter((document) => /name: simlock-console/.test(document))
        .join('\n---\n'),
    });
    expect(applied.exitCode, applied.stderr).toBe(0);
  });
});
