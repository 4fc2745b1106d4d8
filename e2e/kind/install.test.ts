// docs/INSTALL.md's kind section, command by command, on a real kind cluster (tools/kind: kind from
// its Go module, a node image with a real kubelet and containerd), then docs/AGENT-INSTALL.md's
// ServiceAccount identities for three fake-driver agents on this machine, and the plugin through
// the proxy's Service: leases, an exec, the waiting reasons, releases; the leader pod killed, a
// helm upgrade and a helm uninstall, with requests in flight.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import type { AgentProcess } from '../../test/cluster/agents.js';
import { eventually } from '../../test/cluster/harness.js';
import {
  adminClient,
  SIMCTL_ANSWER,
  startAgents,
  SYSTEM_NAMESPACE,
  tokenKubeconfig,
} from './agents.js';
import { cannotStart, type Release } from './cannot-start.js';
import { clusterReady } from './head-start.js';
import { KindRun, must } from './kind.js';
import { pods, waitForRollout } from './pods.js';
import { requestsThrough } from './requests.js';

const tools = inject('kindTools');
const CI_NAMESPACE = 'mobile-ci';
const deployments = ['simlock-controller', 'simlock-proxy'];
/** A command line's words, for those with no spaces inside their arguments. */
const words = (line: string): string[] => line.split(' ');

describe.skipIf(tools.ready)('kind tier', () => {
  it(`DID NOT RUN: ${tools.ready ? '' : tools.missing}`, () => undefined);
});

describe.runIf(tools.ready)(
  'kind: docs/INSTALL.md and AGENT-INSTALL.md, command by command',
  () => {
    let kind: KindRun;
    const agents: AgentProcess[] = [];
    const stops: (() => void)[] = [];
    /** The plugin's environment: the CI user's kubeconfig and the proxy's forwarded URL. */
    const user: NodeJS.ProcessEnv = {};
    const helm = (args: string[]) => kind.run('helm', args, { timeoutMs: 300_000 });
    const simlock = (args: string[]) => kind.kubectl(['simlock', ...args], { env: user });
    const leader = async (): Promise<string> =>
      must(
        await kind.kubectl(
          [
            '-n',
            SYSTEM_NAMESPACE,
            'get',
            'leases.coordination.k8s.io',
            'simlock-controller',
            '-o',
            'jsonpath={.spec.holderIdentity}',
          ],
          { record: false },
        ),
        'kubectl get lease simlock-controller',
      ).trim();

    /** Each step needs the ones before it: after a failure, the rest say so instead of waiting. */
    let failed: string | undefined;
    const step = (name: string, body: () => Promise<void>, timeoutMs: number) =>
      it(
        name,
        async () => {
          if (failed) throw new Error(`not run: the step before it failed ("${failed}")`);
          try {
            await body();
          } catch (error) {
            failed = name;
            throw error;
          }
        },
        timeoutMs,
      );

    beforeAll(() => {
      const place = inject('kindInstallRun');
      if (tools.ready && place) kind = KindRun.attach(tools, place);
    });
    afterAll(async () => {
      stops.forEach((stop) => stop());
      await Promise.all(agents.map((agent) => agent.kill()));
      await kind?.cleanup();
    }, 180_000);

    step(
      'kind create cluster; docker build; kind load docker-image',
      // Begun by the global setup while the last cluster files ran, if it could be (head-start.ts).
      () => clusterReady(kind, 1_400_000),
      1_500_000,
    );

    step(
      'helm install: two controllers (one leads), two proxies Ready, under the restricted Pod Security Standard',
      async () => {
        must(await kind.kubectl(['create', 'namespace', SYSTEM_NAMESPACE]), 'create namespace');
        const enforce = 'pod-security.kubernetes.io/enforce=restricted';
        must(await kind.kubectl(words(`label namespace ${SYSTEM_NAMESPACE} ${enforce}`)), 'label');
        const install = `install simlock charts/simlock --namespace ${SYSTEM_NAMESPACE} --create-namespace`;
        must(await helm(words(install)), 'helm install');
        await waitForRollout(kind, SYSTEM_NAMESPACE, deployments);
        // INSTALL.md's checks, as people run them (the transcript keeps their output).
        must(await kind.kubectl(['-n', SYSTEM_NAMESPACE, 'get', 'pods']), 'get pods');
        const running = await pods(kind, SYSTEM_NAMESPACE);
        const names = (component: string) =>
          running
            .filter((pod) => pod.metadata.labels?.['app.kubernetes.io/component'] === component)
            .map((pod) => pod.metadata.name);
        expect(names('controller')).toHaveLength(2);
        expect(names('proxy')).toHaveLength(2);
        const holder = await eventually(async () => (await leader()) || undefined, {
          timeoutMs: 60_000,
          what: 'a controller leading',
        });
        expect(names('controller')).toContain(holder);
        const lease = `-n ${SYSTEM_NAMESPACE} get leases.coordination.k8s.io simlock-controller`;
        const shown = await kind.kubectl([
          ...words(lease),
          '-o',
          'jsonpath={.spec.holderIdentity}{"\\n"}',
        ]);
        expect(must(shown, 'get lease')).toBe(`${holder}\n`);
        const crds = must(await kind.kubectl(['get', 'crds']), 'get crds');
        expect(crds.split('\n').filter((line) => line.includes('simlock.dev'))).toHaveLength(3);
        // The namespace enforces `restricted`: a pod that breaks it is refused by the API server.
        const privileged =
          '{"name":"privileged","image":"simlock:0.1.0","securityContext":{"privileged":true}}';
        const refused = await kind.kubectl([
          ...words(`-n ${SYSTEM_NAMESPACE} run privileged --image=simlock:0.1.0 --dry-run=server`),
          `--overrides={"spec":{"containers":[${privileged}]}}`,
        ]);
        expect(refused.exitCode).not.toBe(0);
        expect(refused.stderr).toContain('violates PodSecurity "restricted');
      },
      300_000,
    );

    step(
      'agents connect with ServiceAccount tokens; a CI user gets simlock-user',
      async () => {
        const serviceAccounts = '{mac-mini-1,mac-mini-2,android-box-1}';
        const upgrade = `upgrade simlock charts/simlock -n ${SYSTEM_NAMESPACE} --reuse-values`;
        must(
          await helm([...words(upgrade), '--set', `agents.serviceAccounts=${serviceAccounts}`]),
          'helm upgrade (agents.serviceAccounts)',
        );
        agents.push(...(await startAgents(kind, adminClient(kind))));
        const workers = must(await kind.kubectl(['get', 'workers.simlock.dev']), 'get workers');
        for (const name of ['mac-mini-1', 'mac-mini-2', 'android-box-1'])
          expect(workers).toContain(name);

        must(await kind.kubectl(['create', 'namespace', CI_NAMESPACE]), 'create namespace');
        must(
          await kind.kubectl(['-n', CI_NAMESPACE, 'create', 'serviceaccount', 'ci']),
          'create sa',
        );
        must(
          await kind.kubectl(
            words(
              `-n ${CI_NAMESPACE} create rolebinding simlock-users --clusterrole=simlock-user --serviceaccount=${CI_NAMESPACE}:ci`,
            ),
          ),
          'create rolebinding',
        );
        user.KUBECONFIG = await tokenKubeconfig(kind, CI_NAMESPACE, 'ci');
        const forward = await kind.portForward(SYSTEM_NAMESPACE, 'simlock-proxy', 8443);
        stops.push(() => forward.stop());
        user.SIMLOCK_PROXY_URL = forward.url;
      },
      180_000,
    );

    step(
      'kubectl simlock: lease a simulator, an emulator and a phone; exec; list --requests; release',
      async () => {
        const lease = async (name: string, args: string[]) =>
          must(
            await simlock(['lease', '--name', name, '--holder', 'ci', '-n', CI_NAMESPACE, ...args]),
            `lease ${name}`,
          );
        expect(await lease('sim-1', ['--platform', 'ios', '--device', 'iPhone 16'])).toBe(
          'Lease sim-1: iPhone 16 A1B2C3D4-0001-4000-8000-000000000001 on mac-mini-1\n',
        );
        expect(await lease('emulator-1', ['--platform', 'android', '--device', 'Pixel 8'])).toBe(
          'Lease emulator-1: Pixel 8 (emulator) Pixel_8_API_34 on android-box-1\n',
        );
        expect(await lease('phone-1', ['--platform', 'ios', '--physical'])).toBe(
          "Lease phone-1: Tester's iPhone 00008110-001A2B3C4D5E (physical) on mac-mini-2\n",
        );

        const exec = await simlock(['simctl', '--lease', 'sim-1', '-n', CI_NAMESPACE, 'listapps']);
        // The fake tool says how it was called: the agent aimed simctl at the leased simulator.
        expect(exec.stdout).toBe(
          `fake-tool: simctl listapps A1B2C3D4-0001-4000-8000-000000000001\n${SIMCTL_ANSWER.stdout}`,
        );
        expect(exec.exitCode, exec.stderr).toBe(SIMCTL_ANSWER.exitCode);

        // mac-mini-1 runs two iOS simulators at most: with a second one leased, an iPad waits.
        await lease('sim-2', ['--platform', 'ios', '--device', 'iPhone 16 Pro']);
        const ipad = simlock([
          ...words(`lease --name ipad-1 --holder ci -n ${CI_NAMESPACE} --platform ios --device`),
          'iPad Pro 13-inch (M4)',
        ]);
        await eventually(
          async () => {
            const listed = must(
              await kind.kubectl(['simlock', 'list', '--requests', '-n', CI_NAMESPACE], {
                env: user,
                record: false,
              }),
              'list --requests',
            );
            return listed.includes('mac-mini-1: full: running limit for iOS') ? listed : undefined;
          },
          { timeoutMs: 30_000, intervalMs: 500, what: 'ipad-1 waiting with its reasons' },
        );
        const waiting = must(await simlock(['list', '--requests', '-n', CI_NAMESPACE]), 'list');
        expect(waiting).toMatch(
          /^Request ipad-1: ci, ios iPad Pro 13-inch \(M4\), queued at 1, waiting \d+s\n/,
        );
        expect(waiting).toContain('  android-box-1: no driver for iOS\n');
        expect(waiting).toContain('  mac-mini-1: full: running limit for iOS\n');

        must(await simlock(['release', 'sim-1', '-n', CI_NAMESPACE]), 'release sim-1');
        expect(must(await ipad, 'lease ipad-1')).toMatch(
          /^Lease ipad-1: iPad Pro 13-inch \(M4\) .* on mac-mini-1\n$/,
        );
        for (const name of ['sim-2', 'ipad-1', 'emulator-1', 'phone-1']) {
          must(await simlock(['release', name, '-n', CI_NAMESPACE]), `release ${name}`);
        }
      },
      180_000,
    );

    step(
      'the leader pod force-deleted while leases are requested: a new leader within the lease duration; nothing lost or granted twice',
      async () => {
        const requests = [
          ...['a', 'b', 'c', 'd'].map((n) => ({
            name: `failover-sim-${n}`,
            args: ['--platform', 'ios'],
          })),
          ...['a', 'b'].map((n) => ({
            name: `failover-emulator-${n}`,
            args: ['--platform', 'android', '--device', 'Pixel 8'],
          })),
        ];
        let tookMs = 0;
        const wrong = await requestsThrough(
          kind,
          adminClient(kind),
          user,
          CI_NAMESPACE,
          requests,
          3,
          async () => {
            const old = await leader();
            const killed = Date.now();
            const deletion = `-n ${SYSTEM_NAMESPACE} delete pod ${old} --grace-period=0 --force`;
            must(await kind.kubectl(words(deletion)), 'delete the leader pod');
            const next = await eventually(
              async () => {
                const holder = await leader();
                return holder && holder !== old ? holder : undefined;
              },
              { timeoutMs: 30_000, intervalMs: 200, what: 'a new leader' },
            );
            tookMs = Date.now() - killed;
            console.log(`kind: ${next} leads ${tookMs} ms after ${old} was deleted`);
          },
        );
        // The chart's controller.leaseDurationSeconds (15), plus one retry period of the standby.
        expect(tookMs).toBeLessThan(15_000 + 2_000);
        expect(wrong).toEqual([]);
        await waitForRollout(kind, SYSTEM_NAMESPACE, deployments);
      },
      300_000,
    );

    step(
      'helm upgrade with a changed value rolls every pod; no request lost',
      async () => {
        const before = (await pods(kind, SYSTEM_NAMESPACE)).map((pod) => pod.metadata.name);
        const requests = ['a', 'b', 'c', 'd'].map((n) => ({
          name: `upgrade-sim-${n}`,
          args: ['--platform', 'ios'],
        }));
        const wrong = await requestsThrough(
          kind,
          adminClient(kind),
          user,
          CI_NAMESPACE,
          requests,
          2,
          async () => {
            const values = 'controller.podAnnotations.rollout=2,proxy.podAnnotations.rollout=2';
            const upgrade = `upgrade simlock charts/simlock -n ${SYSTEM_NAMESPACE} --reuse-values --set-string ${values}`;
            must(await helm(words(upgrade)), 'helm upgrade');
            await waitForRollout(kind, SYSTEM_NAMESPACE, deployments);
            await eventually(
              async () => {
                const now = (await pods(kind, SYSTEM_NAMESPACE)).map((pod) => pod.metadata.name);
                return now.some((name) => before.includes(name)) ? undefined : now;
              },
              {
                timeoutMs: 120_000,
                intervalMs: 1000,
                what: 'every pod of before the upgrade gone',
              },
            );
          },
        );
        expect(wrong).toEqual([]);
      },
      300_000,
    );

    // A controller that cannot start fails the wait soon, the pod and the cause in the message;
    // each case puts the release back (cannot-start.ts).
    const release = (): Release => ({
      kind,
      namespace: SYSTEM_NAMESPACE,
      deployments,
      helm: (args) => helm(args),
    });
    for (const [name, body] of cannotStart) step(name, () => body(release()), 300_000);

    step(
      'helm uninstall leaves nothing of the release behind',
      async () => {
        // The agents lose their identities with the release: stop them first.
        await Promise.all(agents.splice(0).map((agent) => agent.kill()));
        const manifest = must(
          await helm(['get', 'manifest', 'simlock', '-n', SYSTEM_NAMESPACE]),
          'helm get manifest',
        );
        must(
          await helm(['uninstall', 'simlock', '--namespace', SYSTEM_NAMESPACE, '--wait']),
          'helm uninstall',
        );
        const left = await kind.kubectl(['get', '-f', '-', '--ignore-not-found', '-o', 'name'], {
          input: manifest,
        });
        expect(left.stderr).toBe('');
        expect(left.stdout).toBe('');
        await eventually(
          async () => ((await pods(kind, SYSTEM_NAMESPACE)).length === 0 ? true : undefined),
          { timeoutMs: 120_000, intervalMs: 1000, what: "the release's pods gone" },
        );
        // What stays in the namespace was made by the processes, not by Helm: the controller's
        // leader-election Lease and the agents' heartbeats (deleting the namespace removes them).
        const kinds = must(
          await kind.kubectl(['api-resources', '--verbs=list', '--namespaced', '-o', 'name']),
          'kubectl api-resources',
        )
          .split('\n')
          .filter((name) => name && !name.startsWith('events'));
        const remaining = must(
          await kind.kubectl(['-n', SYSTEM_NAMESPACE, 'get', kinds.join(','), '-o', 'name']),
          'kubectl get everything',
        )
          .split('\n')
          .filter(Boolean)
          .sort();
        expect(remaining).toEqual([
          'configmap/kube-root-ca.crt',
          'lease.coordination.k8s.io/simlock-controller',
          'lease.coordination.k8s.io/worker-android-box-1',
          'lease.coordination.k8s.io/worker-mac-mini-1',
          'lease.coordination.k8s.io/worker-mac-mini-2',
          'serviceaccount/default',
        ]);
      },
      300_000,
    );
  },
);
