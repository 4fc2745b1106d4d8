// The Helm chart, with the real helm: it lints, renders with default and other values, refuses bad
// values with a message that names the value, installs into the real control plane (every object
// accepted by the API server), and its pods meet the `restricted` Pod Security Standard as the API
// server enforces it. What the installed RBAC and admission policies allow is e2e/rbac.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ControllerMetrics } from '../controller/index.js';
import { tunnelAccess } from '../api/index.js';
import { KubeApiError, subjectMay } from '../runtime/index.js';
import { useCluster } from '../test/cluster/harness.js';
import { chartPath, helm, parseManifests, type KubeObject } from '../test/cluster/helm.js';

const cluster = useCluster('chart');

interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs: string[];
}

interface PodSpec {
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  securityContext?: Record<string, unknown>;
  containers: {
    name: string;
    args?: string[];
    resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
    securityContext?: Record<string, unknown>;
    livenessProbe?: { httpGet?: { path: string } };
    readinessProbe?: { httpGet?: { path: string } };
    startupProbe?: { httpGet?: { path: string } };
  }[];
}

interface Deployment extends KubeObject {
  spec: { replicas: number; template: { spec: PodSpec } };
}

async function render(args: string[] = []): Promise<KubeObject[]> {
  const rendered = await helm([
    'template',
    'simlock',
    chartPath,
    '--namespace',
    'simlock-system',
    ...args,
  ]);
  expect(rendered.stderr).toBe('');
  expect(rendered.exitCode).toBe(0);
  return parseManifests(rendered.stdout);
}

function find<T extends KubeObject = KubeObject>(
  objects: KubeObject[],
  kind: string,
  name: string,
): T {
  const found = objects.find((object) => object.kind === kind && object.metadata.name === name);
  if (!found) {
    const names = objects.map((object) => `${object.kind}/${object.metadata.name}`).join(', ');
    throw new Error(`no ${kind} ${name} among ${names}`);
  }
  return found as T;
}

function rules(objects: KubeObject[], kind: 'ClusterRole' | 'Role', name: string): PolicyRule[] {
  return find<KubeObject & { rules: PolicyRule[] }>(objects, kind, name).rules;
}

const simlock = (resources: string[], verbs: string[]): PolicyRule => ({
  apiGroups: ['simlock.dev'],
  resources,
  verbs,
});
const userRules = [
  // patch: kubectl simlock extend; the force-release annotation is the admission policy's to refuse.
  simlock(['leaserequests'], ['create', 'delete', 'get', 'list', 'watch', 'patch']),
  simlock(['leases'], ['get', 'list', 'watch']),
  // lease --hold renews a holder session; --owner pod/NAME reads the pod's uid.
  {
    apiGroups: ['coordination.k8s.io'],
    resources: ['leases'],
    verbs: ['create', 'get', 'update', 'delete'],
  },
  { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
  simlock(['leases/exec'], ['create']),
];

describe('helm lint and helm template', () => {
  it('lints clean, with the defaults and with other values', async () => {
    const defaults = await helm(['lint', '--strict', chartPath]);
    expect(defaults.stdout).toContain('0 chart(s) failed');
    expect(defaults.exitCode).toBe(0);
    const others = await helm([
      'lint',
      '--strict',
      chartPath,
      '--set',
      'metrics.serviceMonitor.enabled=true,controller.watchNamespace=team-a,agents.serviceAccounts={mac-1}',
    ]);
    expect(others.exitCode).toBe(0);
  });

  it('renders the controller: two replicas, leader election, probes, resources, hardened', async () => {
    const objects = await render();
    const controller = find<Deployment>(objects, 'Deployment', 'simlock-controller');
    expect(controller.metadata.namespace).toBe('simlock-system');
    expect(controller.spec.replicas).toBe(2);
    const pod = controller.spec.template.spec;
    expect(pod.serviceAccountName).toBe('simlock-controller');
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    const [container] = pod.containers;
    expect(container?.args).toEqual([
      'controller',
      '--namespace=simlock-system',
      '--listen=0.0.0.0:8080',
      '--leader-election=true',
      '--lease-duration-seconds=15',
      '--max-lease-duration=24h',
      '--identity=$(POD_NAME)',
    ]);
    expect(container?.livenessProbe?.httpGet?.path).toBe('/healthz');
    expect(container?.readinessProbe?.httpGet?.path).toBe('/readyz');
    expect(container?.resources?.requests).toMatchObject({ cpu: '50m', memory: '128Mi' });
    expect(container?.resources?.limits).toMatchObject({ memory: '512Mi' });
    expect(container?.securityContext).toMatchObject({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });

    const proxy = find<Deployment>(objects, 'Deployment', 'simlock-proxy');
    expect(proxy.spec.template.spec.containers[0]?.args).toEqual([
      'proxy',
      '--listen=0.0.0.0:8443',
      // Each replica names itself to the others (forwards to the one holding a tunnel, ADR 0024).
      '--advertise-url=http://$(POD_IP):8443',
    ]);
    expect(proxy.spec.template.spec.serviceAccountName).toBe('simlock-proxy');
    expect(find(objects, 'Service', 'simlock-proxy')).toMatchObject({
      spec: { type: 'ClusterIP', ports: [{ name: 'http', port: 8443, targetPort: 'http' }] },
    });
    expect(find(objects, 'Service', 'simlock-controller-metrics')).toMatchObject({
      spec: { ports: [{ name: 'metrics', port: 8080 }] },
    });
    for (const name of ['simlock-controller', 'simlock-proxy']) {
      expect(find(objects, 'PodDisruptionBudget', name)).toMatchObject({
        spec: { minAvailable: 1 },
      });
    }
    expect(objects.some((object) => object.kind === 'ServiceMonitor')).toBe(false);
  });

  it('renders least-privilege RBAC for the controller, the proxy, agents and people', async () => {
    const objects = await render();
    expect(rules(objects, 'ClusterRole', 'simlock-controller')).toEqual([
      simlock(['workers'], ['get', 'list', 'watch']),
      // Leases in their workers' namespaces, which it makes and lists at start (ADR 0034; an
      // admission policy narrows which namespaces it makes).
      simlock(['leases'], ['create', 'delete', 'get', 'list', 'watch', 'patch']),
      { apiGroups: [''], resources: ['namespaces'], verbs: ['create', 'list'] },
      simlock(['leaserequests'], ['get', 'list', 'watch', 'patch', 'update']),
      simlock(['leaserequests/status'], ['patch', 'update']),
      { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
      // Holder sessions (coordination.k8s.io Leases) in every namespace that has requests.
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        verbs: ['get', 'list', 'watch'],
      },
    ]);
    expect(rules(objects, 'Role', 'simlock-controller')).toEqual([
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        verbs: ['get', 'list', 'watch'],
      },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: ['simlock-controller'],
        verbs: ['update'],
      },
      // The usage history the console's Usage page reads (ADR 0027).
      { apiGroups: [''], resources: ['configmaps'], verbs: ['create'] },
      {
        apiGroups: [''],
        resources: ['configmaps'],
        resourceNames: ['simlock-usage'],
        verbs: ['get', 'update'],
      },
    ]);
    expect(rules(objects, 'ClusterRole', 'simlock-proxy')).toEqual([
      { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
      {
        apiGroups: ['authorization.k8s.io'],
        resources: ['subjectaccessreviews'],
        verbs: ['create'],
      },
      simlock(['leases', 'workers'], ['get']),
      // Why a lease ended under an exec: its request's Released reason.
      simlock(['leaserequests'], ['get']),
      // Exec activity for idle reclaim, on the Lease's status.
      simlock(['leases/status'], ['patch']),
    ]);
    expect(rules(objects, 'ClusterRole', 'simlock-agent')).toEqual([
      simlock(['workers', 'workers/status'], ['get', 'create', 'update', 'patch']),
      // Its Worker watched for the operators' spec.unquarantine.
      simlock(['workers'], ['list', 'watch']),
      simlock(['leases'], ['get', 'list', 'watch', 'patch', 'update']),
      simlock(['leases/status'], ['get', 'patch', 'update']),
      { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
    ]);
    expect(rules(objects, 'Role', 'simlock-agent-heartbeat')).toEqual([
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        verbs: ['get', 'create', 'update', 'patch'],
      },
    ]);
    expect(find(objects, 'ClusterRoleBinding', 'simlock-agent')).toMatchObject({
      subjects: [{ kind: 'Group', name: 'simlock:agents' }],
    });
    expect(rules(objects, 'ClusterRole', 'simlock-user')).toEqual(userRules);
    expect(find(objects, 'ClusterRole', 'simlock-user').metadata.labels).toMatchObject({
      'rbac.authorization.k8s.io/aggregate-to-edit': 'true',
    });
    expect(rules(objects, 'ClusterRole', 'simlock-operator')).toEqual([
      ...userRules,
      simlock(['workers'], ['get', 'list', 'watch', 'patch', 'update']),
      simlock(['leaserequests'], ['force-release']),
    ]);
    // `why` and `list --requests -o wide` read Workers: a role of its own to bind cluster-wide.
    expect(rules(objects, 'ClusterRole', 'simlock-fleet-reader')).toEqual([
      simlock(['workers'], ['get', 'list', 'watch']),
    ]);

    // Nothing anywhere grants everything, or reads Secrets.
    for (const object of objects) {
      for (const rule of (object as { rules?: PolicyRule[] }).rules ?? []) {
        expect([...(rule.apiGroups ?? []), ...(rule.resources ?? []), ...rule.verbs]).not.toContain(
          '*',
        );
        expect(rule.resources ?? []).not.toContain('secrets');
      }
    }
  });

  it('renders the admission policies with the controller and agent identities of the release', async () => {
    const objects = await render();
    const policies = objects.filter((object) => object.kind === 'ValidatingAdmissionPolicy');
    expect(policies.map((policy) => policy.metadata.name).sort()).toEqual([
      'simlock-agent-own-heartbeat',
      'simlock-agent-own-leases',
      'simlock-agent-own-worker',
      'simlock-controller-lease-namespaces',
      'simlock-controller-writes-request-status',
      'simlock-force-release',
      'simlock-max-lease-duration',
    ]);
    for (const policy of policies) {
      // Admins are exempt from the identity policies: tests and break-glass write status as
      // system:masters. The lifetime policies hold for everyone: the maximum is the maximum, and
      // an admin may force-release (the authorizer allows them the verb) under their own name.
      // The namespace policy binds the controller alone, admins aside by its match.
      const exempt = ![
        'simlock-force-release',
        'simlock-max-lease-duration',
        'simlock-controller-lease-namespaces',
      ].includes(policy.metadata.name);
      expect(
        JSON.stringify(policy).includes("!('system:masters' in request.userInfo.groups)"),
      ).toBe(exempt);
      expect(find(objects, 'ValidatingAdmissionPolicyBinding', policy.metadata.name)).toMatchObject(
        { spec: { policyName: policy.metadata.name, validationActions: ['Deny'] } },
      );
    }
    const text = JSON.stringify(
      find(objects, 'ValidatingAdmissionPolicy', 'simlock-agent-own-worker'),
    );
    expect(text).toContain("startsWith('system:serviceaccount:simlock-system:worker-')");
    expect(text).toContain("'simlock:agents' in request.userInfo.groups");
    expect(
      JSON.stringify(
        find(objects, 'ValidatingAdmissionPolicy', 'simlock-controller-writes-request-status'),
      ),
    ).toContain(
      "request.userInfo.username in ['system:serviceaccount:simlock-system:simlock-controller']",
    );
  });

  it('renders other values: names, one controller, no proxy, agents, a watched namespace, a ServiceMonitor', async () => {
    const objects = await render([
      '--set',
      'fullnameOverride=lab,controller.replicas=1,controller.leaderElection=false,proxy.enabled=false',
      '--set',
      'controller.watchNamespace=team-a,agents.serviceAccounts={mac-1,linux-2},agents.certificates.enabled=false',
      '--set',
      'metrics.serviceMonitor.enabled=true,rbac.aggregateToBuiltInRoles=false,image.repository=registry.example/simlock,image.tag=dev',
    ]);
    const controller = find<Deployment>(objects, 'Deployment', 'lab-controller');
    expect(controller.spec.replicas).toBe(1);
    expect(controller.spec.template.spec.containers[0]).toMatchObject({
      image: 'registry.example/simlock:dev',
      args: expect.arrayContaining([
        '--leader-election=false',
        '--watch-namespace=team-a',
      ]) as unknown,
    });
    expect(objects.filter((object) => object.kind === 'PodDisruptionBudget')).toEqual([]);
    expect(objects.some((object) => object.metadata.name.includes('proxy'))).toBe(false);
    expect(find(objects, 'ServiceMonitor', 'lab')).toMatchObject({
      spec: { endpoints: [{ port: 'metrics', path: '/metrics' }] },
    });
    // Watching one namespace: the controller's rights on requests are a Role there, not
    // cluster-wide; its Leases are in their workers' namespaces all the same (ADR 0034).
    expect(rules(objects, 'ClusterRole', 'lab-controller')).toEqual([
      simlock(['workers'], ['get', 'list', 'watch']),
      simlock(['leases'], ['create', 'delete', 'get', 'list', 'watch', 'patch']),
      { apiGroups: [''], resources: ['namespaces'], verbs: ['create', 'list'] },
    ]);
    expect(find(objects, 'Role', 'lab-controller-requests').metadata.namespace).toBe('team-a');
    // One ServiceAccount per listed worker, and only they are bound (no certificate group).
    for (const worker of ['mac-1', 'linux-2']) {
      expect(find(objects, 'ServiceAccount', `worker-${worker}`)).toMatchObject({
        automountServiceAccountToken: false,
      });
    }
    const agentSubjects = [
      { kind: 'ServiceAccount', name: 'worker-mac-1', namespace: 'simlock-system' },
      { kind: 'ServiceAccount', name: 'worker-linux-2', namespace: 'simlock-system' },
    ];
    expect(find(objects, 'ClusterRoleBinding', 'lab-agent')).toMatchObject({
      subjects: agentSubjects,
    });
    expect(find(objects, 'RoleBinding', 'lab-agent-heartbeat')).toMatchObject({
      subjects: agentSubjects,
    });
    // Each agent identity may hold the tunnel to the proxy of its own Worker alone (ADR 0024).
    for (const worker of ['mac-1', 'linux-2']) {
      expect(rules(objects, 'ClusterRole', `lab-agent-tunnel-${worker}`)).toEqual([
        {
          apiGroups: ['simlock.dev'],
          resources: ['workers/tunnel'],
          verbs: ['create'],
          resourceNames: [worker],
        },
      ]);
      expect(find(objects, 'ClusterRoleBinding', `lab-agent-tunnel-${worker}`)).toMatchObject({
        subjects: [
          { kind: 'ServiceAccount', name: `worker-${worker}`, namespace: 'simlock-system' },
        ],
      });
    }
    expect(find(objects, 'ClusterRole', 'lab-user').metadata.labels).not.toHaveProperty(
      'rbac.authorization.k8s.io/aggregate-to-edit',
    );
  });

  it('renders the usage dashboard for the Grafana sidecar when asked, as valid JSON of metrics the controller serves', async () => {
    const byDefault = await render();
    expect(byDefault.some((object) => object.metadata.name === 'simlock-dashboard')).toBe(false);
    const objects = await render([
      '--set',
      'metrics.grafanaDashboard.enabled=true,metrics.grafanaDashboard.annotations.grafana_folder=simlock',
    ]);
    const configMap = find<KubeObject & { data: Record<string, string> }>(
      objects,
      'ConfigMap',
      'simlock-dashboard',
    );
    expect(configMap.metadata).toMatchObject({
      namespace: 'simlock-system',
      labels: { grafana_dashboard: '1' },
      annotations: { grafana_folder: 'simlock' },
    });
    const dashboard = JSON.parse(configMap.data['simlock-usage.json'] ?? '') as {
      uid: string;
      panels: { title: string; targets?: { expr: string }[] }[];
    };
    expect(dashboard.uid).toBe('simlock-usage');
    const titles = dashboard.panels.map((panel) => panel.title);
    for (const title of [
      'Wait p50 by platform and model',
      'Wait p90 by platform and model',
      'Lease duration p50 and p90 by platform and model',
      'Utilisation by worker and model',
      'Queue length',
      'Grants per second',
      'Refusals per second',
    ])
      expect(titles).toContain(title);
    // Every series it asks for is one the controller registers.
    const served = new Set(
      (await new ControllerMetrics().registry.getMetricsAsJSON()).map((metric) => metric.name),
    );
    const asked = dashboard.panels
      .flatMap((panel) => panel.targets ?? [])
      .flatMap((target) => target.expr.match(/simlock_[a-z_]+/g) ?? [])
      .map((name) => name.replace(/_(bucket|count|sum)$/, ''));
    expect(asked.length).toBeGreaterThan(10);
    expect(asked.filter((name) => !served.has(name))).toEqual([]);
  });

  it.each([
    [
      'replicas below 1',
      ['--set', 'controller.replicas=0'],
      "at '/controller/replicas': minimum: got 0, want 1",
    ],
    [
      'replicas that are not a number',
      ['--set', 'proxy.replicas=two'],
      "at '/proxy/replicas': got string, want integer",
    ],
    [
      'an image tag that is a number',
      ['--set-json', 'image.tag=1.2'],
      "at '/image/tag': got number, want string",
    ],
    [
      'a misspelt value',
      ['--set', 'controler.replicas=2'],
      "additional properties 'controler' not allowed",
    ],
    ['an unknown pull policy', ['--set', 'image.pullPolicy=Sometimes'], "at '/image/pullPolicy'"],
    [
      'a worker name that is not a Kubernetes name',
      ['--set', 'agents.serviceAccounts={Mac_1}'],
      "at '/agents/serviceAccounts/0': 'Mac_1' does not match pattern",
    ],
  ])('refuses %s, naming the value', async (_case, args, message) => {
    const rendered = await helm(['template', 'simlock', chartPath, ...args]);
    expect(rendered.exitCode).not.toBe(0);
    expect(rendered.stderr).toContain("values don't meet the specifications of the schema");
    expect(rendered.stderr).toContain(message);
  });

  it('mounts the CA bundle the proxy verifies agents with, and passes the plain-HTTP flag only when asked', async () => {
    interface Volumes {
      spec: {
        template: {
          spec: PodSpec & {
            volumes: {
              name: string;
              secret?: { secretName: string };
              configMap?: { name: string };
            }[];
          };
        };
      };
    }
    const fromSecret = find<Deployment & Volumes>(
      await render(['--set', 'proxy.agentTls.caSecret=agents-ca']),
      'Deployment',
      'simlock-proxy',
    );
    expect(fromSecret.spec.template.spec.containers[0]?.args).toEqual([
      'proxy',
      '--listen=0.0.0.0:8443',
      '--agent-ca-file=/etc/simlock/agent-ca/ca.crt',
      '--advertise-url=http://$(POD_IP):8443',
    ]);
    expect(fromSecret.spec.template.spec.volumes).toContainEqual({
      name: 'agent-ca',
      secret: { secretName: 'agents-ca' },
    });
    const demo = find<Deployment & Volumes>(
      await render([
        '--set',
        'proxy.agentTls.caConfigMap=agents-ca,proxy.agentTls.caKey=bundle.pem,proxy.agentTls.allowPlainHttp=true',
      ]),
      'Deployment',
      'simlock-proxy',
    );
    expect(demo.spec.template.spec.containers[0]?.args).toEqual([
      'proxy',
      '--listen=0.0.0.0:8443',
      '--agent-ca-file=/etc/simlock/agent-ca/bundle.pem',
      '--allow-plain-http-agents',
      '--advertise-url=http://$(POD_IP):8443',
    ]);
    expect(demo.spec.template.spec.volumes).toContainEqual({
      name: 'agent-ca',
      configMap: { name: 'agents-ca' },
    });
    const both = await helm([
      'template',
      'simlock',
      chartPath,
      '--set',
      'proxy.agentTls.caSecret=a,proxy.agentTls.caConfigMap=b',
    ]);
    expect(both.exitCode).not.toBe(0);
    expect(both.stderr).toContain('proxy.agentTls: set caSecret or caConfigMap, not both');
  });

  it('refuses two controllers without leader election, and Kubernetes before 1.30', async () => {
    const unsafe = await helm([
      'template',
      'simlock',
      chartPath,
      '--set',
      'controller.leaderElection=false',
    ]);
    expect(unsafe.exitCode).not.toBe(0);
    expect(unsafe.stderr).toContain(
      'controller.replicas must be 1 when controller.leaderElection is false',
    );
    const old = await helm(['template', 'simlock', chartPath, '--kube-version', '1.29.0']);
    expect(old.exitCode).not.toBe(0);
    expect(old.stderr).toContain('chart requires kubeVersion: >=1.30.0-0');
  });
});

describe('helm install on the real API server', () => {
  // Cluster-scoped names carry the namespace, so other test files' objects never clash with these;
  // the namespaced admission policies cover only this file's namespace.
  const fullname = `simlock-${cluster.namespace}`;
  const worker = `${cluster.namespace}-mac`;
  let installed: { stdout: string; manifest: KubeObject[] };

  beforeAll(async () => {
    const install = await helm([
      'install',
      'simlock',
      chartPath,
      '--namespace',
      cluster.namespace,
      // The global setup applied crds/ already (and they are the same files).
      '--skip-crds',
      '--set',
      `fullnameOverride=${fullname},agents.serviceAccounts={${worker}},metrics.grafanaDashboard.enabled=true`,
      '--set-json',
      `admission.namespaceSelector=${JSON.stringify({
        matchLabels: { 'kubernetes.io/metadata.name': cluster.namespace },
      })}`,
    ]);
    expect(install.stderr).toBe('');
    expect(install.exitCode).toBe(0);
    const manifest = await helm(['get', 'manifest', 'simlock', '--namespace', cluster.namespace]);
    installed = { stdout: install.stdout, manifest: parseManifests(manifest.stdout) };
  });

  afterAll(async () => {
    await helm(['uninstall', 'simlock', '--namespace', cluster.namespace]);
  });

  it('creates every object of the chart, cluster-scoped ones named after the release', async () => {
    const kinds = installed.manifest.map((object) => object.kind);
    for (const kind of [
      'Deployment',
      'Service',
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
      'Role',
      'RoleBinding',
      'PodDisruptionBudget',
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
      'ConfigMap',
    ])
      expect(kinds).toContain(kind);
    const served = await cluster.kubectl(['get', '-f', '-', '-o', 'json'], {
      input: installed.manifest.map((object) => stringify(object)).join('---\n'),
    });
    expect(served.stderr).toBe('');
    const items = (JSON.parse(served.stdout) as { items: KubeObject[] }).items;
    expect(items.map((object) => `${object.kind}/${object.metadata.name}`).sort()).toEqual(
      installed.manifest.map((object) => `${object.kind}/${object.metadata.name}`).sort(),
    );
    for (const object of items) {
      if (object.metadata.namespace === undefined)
        expect(object.metadata.name.startsWith(fullname)).toBe(true);
      expect(object.metadata.labels?.['app.kubernetes.io/instance']).toBe('simlock');
    }
    const status = await helm([
      'status',
      'simlock',
      '--namespace',
      cluster.namespace,
      '-o',
      'json',
    ]);
    expect((JSON.parse(status.stdout) as { info: { status: string } }).info.status).toBe(
      'deployed',
    );
  });

  it('tells the next steps: agent tokens, the flags agents need, role bindings', () => {
    const notes = installed.stdout.slice(installed.stdout.indexOf('NOTES:'));
    expect(notes).toContain(
      `kubectl -n ${cluster.namespace} create token worker-${worker} --duration=8760h`,
    );
    expect(notes).toContain(
      `--namespace ${cluster.namespace} --exec-allowed-identity system:serviceaccount:${cluster.namespace}:${fullname}-proxy`,
    );
    expect(notes).toContain(
      "and a certificate for its exec server (tls.certFile, tls.keyFile) signed by a CA in the image's system roots (or set proxy.agentTls.caSecret).",
    );
    expect(notes).not.toContain('plain http://');
    expect(notes).toContain(`--clusterrole=${fullname}-user`);
    expect(notes).not.toContain('CRDs were not served');
  });

  it("lets an agent's identity hold the tunnel of its own Worker and of no other, as the real authorizer answers", async () => {
    const agent = {
      username: `system:serviceaccount:${cluster.namespace}:worker-${worker}`,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${cluster.namespace}`],
    };
    expect(await subjectMay(cluster.admin, agent, tunnelAccess(worker))).toBe(true);
    expect(await subjectMay(cluster.admin, agent, tunnelAccess(`${worker}-other`))).toBe(false);
  });

  it('runs pods that the API server admits under the restricted Pod Security Standard', async () => {
    const namespace = `${cluster.namespace}-restricted`;
    await cluster.admin.create('/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace, labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } },
    });
    const admit = (name: string, spec: PodSpec) =>
      cluster.admin.create(
        `/api/v1/namespaces/${namespace}/pods`,
        { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace }, spec },
        { query: { dryRun: 'All' } },
      );
    for (const component of ['controller', 'proxy']) {
      const deployment = find<Deployment>(
        installed.manifest,
        'Deployment',
        `${fullname}-${component}`,
      );
      await admit(component, deployment.spec.template.spec);
    }
    // The check is live: the same pod with root allowed is refused.
    const controller = find<Deployment>(installed.manifest, 'Deployment', `${fullname}-controller`);
    const lax = structuredClone(controller.spec.template.spec);
    lax.securityContext = {};
    for (const container of lax.containers) container.securityContext = {};
    const refusal = await admit('lax', lax).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(KubeApiError);
    expect((refusal as KubeApiError).message).toContain('violates PodSecurity "restricted:latest"');
    await cluster.admin.delete(`/api/v1/namespaces/${namespace}`).catch(() => undefined);
  });

  it('is removed by helm uninstall, cluster-scoped objects included', async () => {
    const uninstall = await helm(['uninstall', 'simlock', '--namespace', cluster.namespace]);
    expect(uninstall.exitCode).toBe(0);
    const clusterScoped = installed.manifest.filter((object) => !object.metadata.namespace);
    expect(clusterScoped.length).toBeGreaterThan(0);
    const left = await cluster.kubectl(['get', '-f', '-', '-o', 'name', '--ignore-not-found'], {
      input: clusterScoped.map((object) => stringify(object)).join('---\n'),
    });
    expect(left.stdout.trim()).toBe('');
  });
});
