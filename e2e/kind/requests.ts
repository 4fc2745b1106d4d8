// Lease requests made through the real plugin while the cluster is disturbed (the leader pod
// killed, a helm upgrade rolling the pods), and the verdict: every request ends Granted (and is
// released), Failed with a code, or Released; none is granted under two Leases.
import { Informer, simlockPath, type KubeClient } from '../../runtime/index.js';
import { eventually, type CommandResult } from '../../test/cluster/harness.js';
import type { KindRun } from './kind.js';

export interface Outcomes {
  /** How each request ended, as the plugin saw it: granted, or failed:<CODE>. */
  ended: Map<string, string>;
  /** Lease uids seen granted, per request name: more than one is a double dispatch. */
  grantedLeases: Map<string, Set<string>>;
  stop(): Promise<void>;
}

/** Watches the Leases of `namespace` for grants, from now on. */
export function watchGrants(admin: KubeClient, namespace: string): Outcomes {
  const grantedLeases = new Map<string, Set<string>>();
  const leases = new Informer(admin, { path: simlockPath('lease', { namespace }) });
  leases.on((event) => {
    const { name, uid } = event.object.metadata;
    if ((event.object.status as { phase?: string } | undefined)?.phase !== 'Granted') return;
    const seen = grantedLeases.get(name) ?? new Set<string>();
    seen.add(String(uid));
    grantedLeases.set(name, seen);
  });
  leases.start();
  return { ended: new Map(), grantedLeases, stop: () => leases.stop() };
}

/** The error code of a failed plugin run: the JSON on the last line of stderr. */
export function errorCode(result: CommandResult): string | undefined {
  const last = result.stderr.trimEnd().split('\n').at(-1) ?? '';
  try {
    return (JSON.parse(last) as { error?: { code?: string } }).error?.code;
  } catch {
    return undefined;
  }
}

/**
 * Runs `kubectl simlock lease` for each of `requests` at once, and releases each grant as soon as
 * it comes (so the requests that wait get their turn); records how each ended.
 */
export async function leaseAndRelease(
  kind: KindRun,
  env: NodeJS.ProcessEnv,
  namespace: string,
  requests: { name: string; args: string[] }[],
  outcomes: Outcomes,
): Promise<void> {
  await Promise.all(
    requests.map(async ({ name, args }) => {
      const leased = await kind.kubectl(
        [
          'simlock',
          'lease',
          '-n',
          namespace,
          '--name',
          name,
          '--holder',
          'ci',
          '--timeout',
          '180s',
          ...args,
        ],
        // The lease's own --timeout, and a minute more for the plugin to give up.
        { env, timeoutMs: 240_000 },
      );
      if (leased.exitCode !== 0) {
        outcomes.ended.set(name, `failed:${errorCode(leased) ?? `exit ${leased.exitCode}`}`);
        return;
      }
      outcomes.ended.set(name, 'granted');
      const released = await kind.kubectl(
        ['simlock', 'release', name, '-n', namespace, '--timeout', '120s'],
        {
          env,
        },
      );
      if (released.exitCode !== 0) {
        outcomes.ended.set(name, `granted, release failed: ${released.stderr.trim()}`);
      }
    }),
  );
}

/** Resolves once `count` LeaseRequests exist in `namespace`: the disturbance finds them there. */
export async function requested(kind: KindRun, namespace: string, count: number): Promise<void> {
  await eventually(
    async () => {
      const listed = await kind.kubectl(
        ['-n', namespace, 'get', 'leaserequests.simlock.dev', '-o', 'name'],
        { record: false },
      );
      return listed.stdout.split('\n').filter(Boolean).length >= count ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 250, what: `${count} requests made` },
  );
}

/**
 * Runs `requests` through leaseAndRelease, and `disturb` once at least `atLeast` of them exist;
 * answers what went wrong with them (violations), once every one has ended.
 */
export async function requestsThrough(
  kind: KindRun,
  admin: KubeClient,
  env: NodeJS.ProcessEnv,
  namespace: string,
  requests: { name: string; args: string[] }[],
  atLeast: number,
  disturb: () => Promise<void>,
): Promise<string[]> {
  const outcomes = watchGrants(admin, namespace);
  const leasing = leaseAndRelease(kind, env, namespace, requests, outcomes);
  try {
    await requested(kind, namespace, atLeast);
    await disturb();
  } finally {
    await leasing;
    await outcomes.stop();
  }
  return violations(
    outcomes,
    requests.map((request) => request.name),
  );
}

/**
 * What is wrong with the outcomes: a request that ended otherwise, or granted twice, or fewer
 * than half of them granted (failing everything would satisfy the rest).
 */
export function violations(outcomes: Outcomes, names: string[]): string[] {
  const found: string[] = [];
  const granted = names.filter((name) => outcomes.ended.get(name) === 'granted').length;
  if (granted < names.length / 2) found.push(`only ${granted} of ${names.length} granted`);
  for (const name of names) {
    const ended = outcomes.ended.get(name);
    if (!ended) found.push(`${name} never ended`);
    else if (!/^(granted|failed:[A-Z_]+)$/.test(ended)) found.push(`${name} ended ${ended}`);
    const leases = outcomes.grantedLeases.get(name)?.size ?? 0;
    if (leases > 1) found.push(`${name} granted under ${leases} Leases`);
  }
  return found;
}
