// docs/INSTALL.md's kind section, run as written on a real kind cluster (tools/kind: kind from its
// Go module, a node image with a real kubelet and containerd): every `sh step=…` block of the page,
// in order, in one shell, from a release's files and no clone (doc-run.ts, release-files.ts): the
// plugin's single binary from its archive, the cluster with the image loaded from its archive,
// helm install of the packaged chart (.tgz), three fake-driver agents in containers of the image
// with ServiceAccount identities, one of them behind NAT (its tunnel to a proxy pod, no endpoint), a CI user's leases, execs (to
// an endpoint and through the tunnel) and waiting reasons through the proxy's Service, the leader
// pod killed and a helm upgrade while requests are in flight, helm uninstall and the cluster
// deleted. The key lines each step prints are checked against the run and against what the page
// shows.
import { beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { join } from 'node:path';
import { eventually } from '../../test/cluster/harness.js';
import { ensureBundles } from '../../test/launch.js';
import { cannotStart, type Release } from './cannot-start.js';
import { DocRun, INSTALL_STEPS } from './doc-run.js';
import { prepareCluster } from './first-steps.js';
import { KindRun, must } from './kind.js';
import { pods, waitForRollout } from './pods.js';
import { requestsThrough } from './requests.js';
import { tierRan } from './tier-status.js';

const tools = inject('kindTools');
const SYSTEM_NAMESPACE = 'simlock-system';
const CI_NAMESPACE = 'mobile-ci';
const deployments = ['simlock-controller', 'simlock-proxy'];
const SIMCTL = [
  'fake-tool: simctl listapps A1B2C3D4-0001-4000-8000-000000000001',
  'com.example.app',
  'exit 7',
];
/** mac-mini-2 is behind NAT: its tool's output and exit code came through its tunnel. */
const DEVICECTL = [
  'fake-tool: devicectl device info apps --device 00008110-001A2B3C4D5E',
  'com.example.app',
  'exit 3',
];
/** The Worker of the host behind NAT: no endpoint, its tunnel up to one proxy pod. */
const TUNNELLED = /^mac-mini-2 +<none> +true +http:\/\/([\d.]+):8443$/;

describe.runIf(tools.ready)(
  tools.ready
    ? 'kind: docs/INSTALL.md, step by step'
    : `kind: docs/INSTALL.md (skipped: ${tools.missing})`,
  () => {
    let kind: KindRun;
    let doc: DocRun;
    /** The page's steps this file ran, in order: at the end, every one of them. */
    const ran: string[] = [];
    const run = async (id: string, options: Parameters<DocRun['step']>[1]) => {
      ran.push(id);
      return doc.step(id, options);
    };
    const helm = (args: string[]) => kind.run('helm', args, { timeoutMs: 300_000 });
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

    beforeAll(async () => {
      const place = inject('kindInstallRun');
      if (!tools.ready || !place) throw new Error('the kind global setup made no install run');
      await tierRan();
      kind = KindRun.attach(tools, place.kind);
      doc = DocRun.attach(kind, place.doc);
      // The tests' own plugin runs (requests.ts) start many at once: built once here, not by each.
      await ensureBundles();
    });
    // No afterAll: the global setup's teardown ends the page's shell (its agents, its
    // port-forward) and deletes the cluster, whatever this file got to.

    step(
      "0, 1: the release's files built and checked, its plugin on PATH; kind create cluster, kind load image-archive",
      async () => {
        await prepareCluster(doc);
        ran.push('setup', 'cluster');
      },
      1_500_000,
    );

    step(
      "2: helm install of the release's chart (.tgz): two controllers, two proxies rolled out, under the restricted Pod Security Standard",
      async () => {
        const install = run('install', {
          timeoutMs: 300_000,
          shows: [
            'deployment "simlock-controller" successfully rolled out',
            'deployment "simlock-proxy" successfully rolled out',
          ],
        });
        // The tier's own wait fails soon, with the pods' logs and events, where a rollout that
        // cannot end keeps `kubectl rollout status` waiting.
        await Promise.all([install, waitForRollout(kind, SYSTEM_NAMESPACE, deployments)]);
        // The namespace enforces `restricted`: a pod that breaks it is refused by the API server.
        const privileged =
          '{"name":"privileged","image":"simlock:0.1.0","securityContext":{"privileged":true}}';
        const refused = await kind.kubectl([
          ...['-n', SYSTEM_NAMESPACE, 'run', 'privileged', '--image=simlock:0.1.0'],
          '--dry-run=server',
          `--overrides={"spec":{"containers":[${privileged}]}}`,
        ]);
        expect(refused.exitCode).not.toBe(0);
        expect(refused.stderr).toContain('violates PodSecurity "restricted');
      },
      300_000,
    );

    step(
      '3: two controllers (one leads), two proxies, the three CRDs',
      async () => {
        const pod = (component: string) =>
          new RegExp(`^(simlock-${component}-[a-z0-9]+-[a-z0-9]+) +1/1 +Running +0 +\\w+$`);
        const output = await run('check', {
          timeoutMs: 120_000,
          shows: [
            pod('controller'),
            pod('proxy'),
            'lease.coordination.k8s.io/simlock-controller condition met',
            /^leaserequests\.simlock\.dev +\S+$/,
            /^leases\.simlock\.dev +\S+$/,
            /^workers\.simlock\.dev +\S+$/,
          ],
        });
        const names = (component: string) =>
          output
            .split('\n')
            .map((line) => pod(component).exec(line)?.[1])
            .filter((name) => name !== undefined);
        expect(names('controller')).toHaveLength(2);
        expect(names('proxy')).toHaveLength(2);
        // The holder of the leader-election Lease, alone on its line: one of the two controllers.
        const holder = output.split('\n').find((line) => /^simlock-controller-[\w-]+$/.test(line));
        expect(names('controller')).toContain(holder);
      },
      180_000,
    );

    step(
      "4: three agents in containers of the release's image, with ServiceAccount identities, their own ports and limits, running; one behind NAT, its tunnel to a proxy pod up",
      async () => {
        const output = await run('agents', {
          timeoutMs: 300_000,
          shows: [
            // The limits of each config: running now / at most.
            /^android-box-1 +false +running +0\/2 +\d+ +\w+$/,
            /^mac-mini-1 +false +running +1\/4 +\d+ +\w+$/,
            /^mac-mini-2 +false +running +0\/4 +\d+ +\w+$/,
            // Endpoints for the two the proxy dials; none for mac-mini-2, whose tunnel is up.
            /^android-box-1 +http:\/\/[\d.]+:\d+ +<none> +<none>$/,
            /^mac-mini-1 +http:\/\/[\d.]+:\d+ +<none> +<none>$/,
            TUNNELLED,
          ],
        });
        // The replica that took the tunnel named itself by the chart's --advertise-url: its pod IP.
        const holder = output
          .split('\n')
          .map((line) => TUNNELLED.exec(line.trimEnd())?.[1])
          .find(Boolean);
        const proxyIps = must(
          await kind.kubectl(
            [
              ...['-n', SYSTEM_NAMESPACE, 'get', 'pods'],
              ...['-l', 'app.kubernetes.io/component=proxy'],
              ...['-o', 'jsonpath={.items[*].status.podIP}'],
            ],
            { record: false },
          ),
          'kubectl get proxy pods',
        ).split(' ');
        expect(proxyIps).toContain(holder);
      },
      300_000,
    );

    step(
      '5: a CI user with simlock-user; leases, an exec through the proxy, why a request waits',
      async () => {
        await run('user', {
          timeoutMs: 120_000,
          shows: [/^Username +system:serviceaccount:mobile-ci:ci$/],
        });
        await run('leases', {
          timeoutMs: 180_000,
          shows: [
            'Lease sim-1: iPhone 16 A1B2C3D4-0001-4000-8000-000000000001 on mac-mini-1',
            'Lease emulator-1: Pixel 8 (emulator) Pixel_8_API_34 on android-box-1',
            "Lease phone-1: Tester's iPhone 00008110-001A2B3C4D5E (physical) on mac-mini-2",
            ...SIMCTL,
            ...DEVICECTL,
          ],
        });
        await run('waiting', {
          timeoutMs: 180_000,
          shows: [
            'Lease sim-2: iPhone 16 Pro A1B2C3D4-0002-4000-8000-000000000002 on mac-mini-1',
            /^Request ipad-1: ci, ios iPad Pro 13-inch \(M4\), queued at 1, waiting \d+s, about \d+[mh]\S* \(1 iOS lease ends before\)$/,
            '  android-box-1: no driver for iOS',
            '  mac-mini-1: full: running limit for iOS',
            '  mac-mini-2: model not offered',
            'Lease sim-1 released',
            'Lease ipad-1: iPad Pro 13-inch (M4) A1B2C3D4-0003-4000-8000-000000000003 on mac-mini-1',
          ],
        });
      },
      480_000,
    );

    step(
      '6: the leader pod force-deleted while leases are requested: a new leader within the lease duration; nothing lost or granted twice',
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
          kind.admin(),
          doc.user,
          CI_NAMESPACE,
          requests,
          3,
          async () => {
            const old = await leader();
            const started = Date.now();
            const failover = run('failover', {
              timeoutMs: 240_000,
              shows: [
                /^pod "simlock-controller-[\w-]+" force deleted from simlock-system namespace$/,
                /^simlock-controller-[\w-]+ leads$/,
                'deployment "simlock-controller" successfully rolled out',
              ],
            });
            // Awaited below; a failure of the poll first must not leave it unhandled.
            failover.catch(() => undefined);
            // From the step's start: its deletion comes within a second or two of it.
            const next = await eventually(
              async () => {
                const holder = await leader();
                return holder && holder !== old ? holder : undefined;
              },
              { timeoutMs: 30_000, intervalMs: 200, what: 'a new leader' },
            );
            tookMs = Date.now() - started;
            console.log(`kind: ${next} leads ${tookMs} ms after the step deleting ${old} began`);
            await failover;
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
      '6: helm upgrade with a changed value rolls every pod, no request lost; the port-forward started again reaches a new proxy',
      async () => {
        const before = (await pods(kind, SYSTEM_NAMESPACE)).map((pod) => pod.metadata.name);
        const requests = ['a', 'b', 'c', 'd'].map((n) => ({
          name: `upgrade-sim-${n}`,
          args: ['--platform', 'ios'],
        }));
        const wrong = await requestsThrough(
          kind,
          kind.admin(),
          doc.user,
          CI_NAMESPACE,
          requests,
          2,
          async () => {
            await run('upgrade', {
              timeoutMs: 300_000,
              shows: [
                'Release "simlock" has been upgraded. Happy Helming!',
                'deployment "simlock-controller" successfully rolled out',
                'deployment "simlock-proxy" successfully rolled out',
                ...SIMCTL,
                'Lease sim-3 released',
              ],
            });
          },
        );
        expect(wrong).toEqual([]);
        await eventually(
          async () => {
            const now = (await pods(kind, SYSTEM_NAMESPACE)).map((pod) => pod.metadata.name);
            return now.some((name) => before.includes(name)) ? undefined : now;
          },
          { timeoutMs: 120_000, intervalMs: 1000, what: 'every pod of before the upgrade gone' },
        );
      },
      420_000,
    );

    // A controller that cannot start fails the wait soon, the pod and the cause in the message;
    // each case puts the release back (cannot-start.ts).
    const release = (): Release => ({
      kind,
      namespace: SYSTEM_NAMESPACE,
      deployments,
      chart: join(doc.place.release, 'simlock-0.1.0.tgz'),
      helm: (args) => helm(args),
    });
    for (const [name, body] of cannotStart) step(name, () => body(release()), 300_000);

    step(
      '6: helm uninstall leaves nothing of the release behind; kind delete cluster',
      async () => {
        const manifest = must(
          await helm(['get', 'manifest', 'simlock', '-n', SYSTEM_NAMESPACE]),
          'helm get manifest',
        );
        await run('uninstall', {
          timeoutMs: 300_000,
          // The agents' containers, removed by name.
          shows: [
            /^[\w-]+-mac-mini-1$/,
            /^[\w-]+-mac-mini-2$/,
            /^[\w-]+-android-box-1$/,
            'release "simlock" uninstalled',
          ],
        });
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
        // leader-election Lease and the agents' heartbeats (deleting the namespace removes them),
        // and the usage history once a leader has led a minute (whether it did depends on timing).
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
          .filter((name) => name && name !== 'configmap/simlock-usage')
          .sort();
        expect(remaining).toEqual([
          'configmap/kube-root-ca.crt',
          'lease.coordination.k8s.io/simlock-controller',
          'lease.coordination.k8s.io/worker-android-box-1',
          'lease.coordination.k8s.io/worker-mac-mini-1',
          'lease.coordination.k8s.io/worker-mac-mini-2',
          'serviceaccount/default',
        ]);
        await run('delete-cluster', {
          timeoutMs: 180_000,
          shows: [/^Deleted nodes: \["[\w-]+-control-plane"\]$/],
        });
      },
      480_000,
    );

    step(
      'every step of docs/INSTALL.md ran, in its order',
      async () => {
        expect(ran).toEqual(INSTALL_STEPS.map((candidate) => candidate.id));
        await Promise.resolve();
      },
      10_000,
    );
  },
);
