// The chart's controller when it cannot start in its pods, each from a cause a person could meet and
// each a real failure of real pods on the kind cluster: a bad flag, a permission its ClusterRole
// lost, a port moved away from the one the probes target, a readiness probe that never passes
// (the LeaseRequest CRD not served). Each answers the message of the failed waitForRollout (the
// install test checks what it says) and then puts the release back and waits for it to roll out.
import { expect } from 'vitest';
import { eventually, type CommandResult } from '../../test/cluster/harness.js';
import { must, type KindRun } from './kind.js';
import { pods, waitForRollout } from './pods.js';

export interface Release {
  kind: KindRun;
  namespace: string;
  deployments: string[];
  /** The chart the release was installed from: the release's packaged .tgz. */
  chart: string;
  helm(args: string[]): Promise<CommandResult>;
}

/** The failed wait's message, or 'rolled out'. */
const failureOf = (wait: Promise<void>): Promise<string> =>
  wait.then(
    () => 'rolled out',
    (error: unknown) => (error as Error).message,
  );

/** A failure is hopeless soon; a minute is the backstop, not the expectation. */
const FAILING_WAIT_MS = 60_000;

/** Waits for the release to roll out again, the failing pods of before given time to go. */
async function restored(release: Release): Promise<void> {
  const known = (await pods(release.kind, release.namespace)).map((pod) => pod.metadata.name);
  await waitForRollout(release.kind, release.namespace, release.deployments, { known });
}

/** helm upgrade of the release with controller.extraArgs set to these. */
const upgrade = (release: Release, args: string[]) =>
  release.helm([
    ...['upgrade', 'simlock', release.chart, '-n', release.namespace, '--reuse-values'],
    ...['--set-json', `controller.extraArgs=${JSON.stringify(args)}`],
  ]);

const restartControllers = (release: Release) =>
  release.kind.kubectl([
    ...['-n', release.namespace, 'rollout', 'restart', 'deployment/simlock-controller'],
  ]);

/** helm upgrade with controller.extraArgs; the failure; extraArgs emptied again. */
async function withControllerArgs(release: Release, args: string[]): Promise<string> {
  must(await upgrade(release, args), 'helm upgrade (extraArgs)');
  const failure = await failureOf(
    waitForRollout(release.kind, release.namespace, release.deployments, {
      timeoutMs: FAILING_WAIT_MS,
    }),
  );
  must(await upgrade(release, []), 'helm upgrade (no extraArgs)');
  await restored(release);
  return failure;
}

interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
}

/**
 * The controller's ClusterRole without `verb` on `resource` (as someone trimming RBAC by hand
 * would leave it), the controllers restarted; the failure; the rule as it was, restarted again.
 */
async function withoutPermission(
  release: Release,
  resource: string,
  verb: string,
): Promise<string> {
  const { kind } = release;
  const role = ['clusterrole', 'simlock-controller'];
  const rules = (
    JSON.parse(must(await kind.kubectl(['get', ...role, '-o', 'json']), 'get clusterrole')) as {
      rules: PolicyRule[];
    }
  ).rules;
  const index = rules.findIndex(
    (rule) => rule.resources?.includes(resource) && rule.verbs.includes(verb),
  );
  const rule = rules[index];
  if (!rule) throw new Error(`no rule of the ClusterRole grants ${verb} ${resource}`);
  const setVerbs = (verbs: string[]) =>
    kind.kubectl([
      ...['patch', ...role, '--type=json', '-p'],
      JSON.stringify([{ op: 'replace', path: `/rules/${index}/verbs`, value: verbs }]),
    ]);
  must(await setVerbs(rule.verbs.filter((each) => each !== verb)), 'kubectl patch clusterrole');
  must(await restartControllers(release), 'kubectl rollout restart');
  const failure = await failureOf(
    waitForRollout(kind, release.namespace, release.deployments, { timeoutMs: FAILING_WAIT_MS }),
  );
  must(await setVerbs(rule.verbs), 'kubectl patch clusterrole (restored)');
  // The crash-looping pod would start again only after kubelet's back-off: restart at once.
  must(await restartControllers(release), 'kubectl rollout restart');
  await restored(release);
  return failure;
}

/**
 * The LeaseRequest CRD not served (as after an upgrade that did not bring the chart's CRDs along:
 * `helm upgrade` never changes them), the controllers restarted: the one that leads cannot list
 * requests and stays unready. The failure; the CRD served again, the same pods recover.
 */
async function withRequestsNotServed(release: Release): Promise<string> {
  const { kind } = release;
  const served = (value: boolean) =>
    kind.kubectl([
      ...['patch', 'crd', 'leaserequests.simlock.dev', '--type=json', '-p'],
      JSON.stringify([{ op: 'replace', path: '/spec/versions/0/served', value }]),
    ]);
  must(await served(false), 'kubectl patch crd (not served)');
  const before = (await pods(kind, release.namespace)).map((pod) => pod.metadata.name);
  must(await restartControllers(release), 'kubectl rollout restart');
  // A standby is ready, and the rollout may end before one of its new pods leads and, three
  // readiness failures later, is unready: wait for that, as someone looking after the rollout.
  await eventually(
    async () => {
      const holder = must(
        await kind.kubectl(
          [
            ...['-n', release.namespace, 'get', 'leases.coordination.k8s.io', 'simlock-controller'],
            ...['-o', 'jsonpath={.spec.holderIdentity}'],
          ],
          { record: false },
        ),
        'get lease',
      ).trim();
      const leader = (await pods(kind, release.namespace)).find(
        (pod) => pod.metadata.name === holder && !before.includes(holder),
      );
      const container = leader?.status?.containerStatuses?.[0];
      return container?.started === true && !container.ready ? true : undefined;
    },
    { timeoutMs: FAILING_WAIT_MS, intervalMs: 1000, what: 'a new controller leading, unready' },
  );
  // Unready means three failures in a row already, 10 s apart from first to last: enough.
  const failure = await failureOf(
    waitForRollout(kind, release.namespace, release.deployments, {
      timeoutMs: FAILING_WAIT_MS,
      unhealthyForMs: 10_000,
    }),
  );
  must(await served(true), 'kubectl patch crd (served)');
  await restored(release);
  return failure;
}

/** How long a case took, failure and restoration, in the log of the run. */
async function timed(what: string, body: () => Promise<string>): Promise<string> {
  const started = Date.now();
  const failure = await body();
  // The whole message, as a person running the wait would see it (docs/INSTALL.md quotes it).
  console.log(`kind: ${what}: failed and restored in ${Date.now() - started} ms:\n${failure}`);
  return failure;
}

/** The install test's steps: each case's name, and what its failure must say. */
export const cannotStart: [string, (release: Release) => Promise<void>][] = [
  [
    'a controller given a bad flag crash-loops: the wait fails with its pod logs',
    async (release) => {
      const failure = await timed('bad flag', () => withControllerArgs(release, ['--bogus-flag']));
      expect(failure).toMatch(/^pod simlock-controller-\S+: controller CrashLoopBackOff\n/);
      expect(failure).toContain('Unknown arguments: bogus-flag');
    },
  ],
  [
    'a controller whose ClusterRole lost list on leaserequests exits at startup: the wait fails with the missing permission',
    async (release) => {
      const failure = await timed('missing permission', () =>
        withoutPermission(release, 'leaserequests', 'list'),
      );
      expect(failure).toMatch(/^pod simlock-controller-\S+: controller CrashLoopBackOff\n/);
      expect(failure).toContain(
        'simlock-controller: missing permission: list leaserequests in API group "simlock.dev" in all namespaces (the requests)\n',
      );
      expect(failure).toContain(
        `permissions missing for system:serviceaccount:${release.namespace}:simlock-controller`,
      );
    },
  ],
  [
    'a controller told to --listen on another port than the probes target: the wait fails with the refused startup probe',
    async (release) => {
      const failure = await timed('wrong port', () =>
        withControllerArgs(release, ['--listen=0.0.0.0:9090']),
      );
      expect(failure).toMatch(
        /^pod simlock-controller-\S+: a probe failing for \d+ s \(x\d+\): Startup probe failed: Get "http:\/\/[\d.]+:8080\/healthz": dial tcp [\d.]+:8080: connect: connection refused\n/,
      );
      // Its logs say where it does listen.
      expect(failure).toContain('"address":"0.0.0.0:9090"');
    },
  ],
  [
    'a leading controller that cannot list LeaseRequests (their CRD not served) stays unready: the wait fails with the Unhealthy events and its logs',
    async (release) => {
      const failure = await timed('readiness failing', () => withRequestsNotServed(release));
      expect(failure).toMatch(
        /^pod simlock-controller-\S+: a probe failing for \d+ s \(x\d+\): Readiness probe failed: HTTP probe failed with statuscode: 503\n/,
      );
      expect(failure).toContain('informer lease requests restarting');
    },
  ],
];
