// Puts a variant of the LeaseRequest CRD in force on a running API server. Established is not
// proof: kube-apiserver rebuilds a CRD's handler (validators, storage, watch cache) after the
// update, and requests already in flight finish on the old one. So after the update the probes
// below are repeated until the API server refuses exactly what the variant's rules refuse, a plain
// status write is accepted, and the resource can be watched again (its new watch cache is built).
import { z } from 'zod';
import {
  KubeApiError,
  resourceVersionOf,
  simlockPath,
  statusReplacement,
  type KubeClient,
} from '../../runtime/index.js';
import { replaceCrd, waitUntil, waitUntilWatchable, type Crd } from '../harness/index.js';
import {
  statusTheGroupRuleRefuses,
  statusTheItemRuleRefuses,
  statusWithAWorkerTwice,
} from './statuses.js';
import { EXPECTED, type Variant } from './variants.js';

const CRD_PATH =
  '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/leaserequests.simlock.dev';
const SWITCH_WITHIN_MS = 90_000;

const StoredCrd = z.object({
  metadata: z.object({ resourceVersion: z.string() }),
  status: z
    .object({ conditions: z.array(z.object({ type: z.string(), status: z.string() })).optional() })
    .optional(),
});

const ProbeObject = z.looseObject({
  metadata: z.looseObject({ resourceVersion: z.string() }),
  spec: z.looseObject({ durationSeconds: z.number().int() }),
});

/** The request the probes write to, in a namespace of its own (the measured ones are deleted). */
export interface Probe {
  namespace: string;
  name: string;
}

export async function createProbe(admin: KubeClient, probe: Probe): Promise<void> {
  await admin.create(simlockPath('leaseRequest', { namespace: probe.namespace }), {
    apiVersion: 'simlock.dev/v1alpha1',
    kind: 'LeaseRequest',
    metadata: { name: probe.name },
    // Room to shrink: under no-cel each spec probe is accepted and takes a second off.
    spec: { platform: 'ios', durationSeconds: 604_800 },
  });
}

/** Replaces the CRD's spec by the variant's and waits until the API server enforces just that. */
export async function applyVariant(
  admin: KubeClient,
  variant: Variant,
  crd: Crd,
  probe: Probe,
): Promise<{ switchMs: number }> {
  const started = performance.now();
  await replaceCrd(admin, crd);
  const expected = EXPECTED[variant];
  await waitUntil(
    async () => {
      if (!(await established(admin))) return false;
      const { itemRule, specRules, duplicateWorker, groupRule, plainStatus } = await refusals(
        admin,
        probe,
      );
      const as = (refused: boolean) => (refused ? 'refused' : 'accepted');
      return (
        plainStatus === 'accepted' &&
        itemRule === as(expected.itemRule) &&
        specRules === as(expected.specRules) &&
        duplicateWorker === as(expected.duplicateWorker) &&
        groupRule === as(expected.groupRule)
      );
    },
    SWITCH_WITHIN_MS,
    `${variant}: the API server enforcing the variant's rules`,
    250,
  );
  // The new handler's watch cache is built anew: measured once a watch opens.
  await waitUntilWatchable(
    admin,
    simlockPath('leaseRequest', { namespace: probe.namespace }),
    'leaserequests after the CRD update',
  );
  return { switchMs: performance.now() - started };
}

async function established(admin: KubeClient): Promise<boolean> {
  const conditions = StoredCrd.parse(await admin.get(CRD_PATH)).status?.conditions ?? [];
  return conditions.some((c) => c.type === 'Established' && c.status === 'True');
}

/** unsettled: neither, for now (the write met the handler being rebuilt); it never matches. */
type Outcome = 'accepted' | 'refused' | 'unsettled';

interface Refusals {
  plainStatus: Outcome;
  itemRule: Outcome;
  specRules: Outcome;
  duplicateWorker: Outcome;
  groupRule: Outcome;
}

/**
 * Writes to the probe: a plain status (accepted under every variant), a status item that breaks
 * the item rule, a spec that breaks the transition rule on spec.durationSeconds, and (each after a
 * plain status again) a worker named twice and a status.workerGroups group that breaks the group
 * rule. A plain status goes before each bad status so that the bad value is new each time: an
 * unchanged bad value would be let through by ratcheting and read as "no rule".
 */
async function refusals(admin: KubeClient, probe: Probe): Promise<Refusals> {
  const path = simlockPath('leaseRequest', { namespace: probe.namespace, name: probe.name });
  const statusPath = `${path}/status`;
  const target = {
    resource: 'leaseRequest' as const,
    namespace: probe.namespace,
    name: probe.name,
  };
  const current = ProbeObject.parse(await admin.get(path));
  const plain = await outcome(() =>
    admin.replace(
      statusPath,
      statusReplacement(
        { ...target, resourceVersion: current.metadata.resourceVersion },
        { phase: 'Pending' },
      ),
    ),
  );
  if (plain.outcome !== 'accepted' || plain.version === undefined)
    return {
      plainStatus: plain.outcome,
      itemRule: 'unsettled',
      specRules: 'unsettled',
      duplicateWorker: 'unsettled',
      groupRule: 'unsettled',
    };
  const item = await outcome(() =>
    admin.replace(
      statusPath,
      statusReplacement(
        { ...target, resourceVersion: plain.version ?? '' },
        statusTheItemRuleRefuses(),
      ),
    ),
  );
  const fresh = ProbeObject.parse(await admin.get(path));
  const spec = await outcome(() =>
    admin.replace(path, {
      ...fresh,
      spec: { ...fresh.spec, durationSeconds: fresh.spec.durationSeconds - 1 },
    }),
  );
  const afterPlain = async (status: Record<string, unknown>) => {
    const again = ProbeObject.parse(await admin.get(path));
    const plainAgain = await outcome(() =>
      admin.replace(
        statusPath,
        statusReplacement(
          { ...target, resourceVersion: again.metadata.resourceVersion },
          { phase: 'Pending' },
        ),
      ),
    );
    if (plainAgain.version === undefined) return { outcome: 'unsettled' as const };
    const version = plainAgain.version;
    return outcome(() =>
      admin.replace(statusPath, statusReplacement({ ...target, resourceVersion: version }, status)),
    );
  };
  const duplicate = await afterPlain(statusWithAWorkerTwice());
  const group = await afterPlain(statusTheGroupRuleRefuses());
  return {
    plainStatus: plain.outcome,
    itemRule: item.outcome,
    specRules: spec.outcome,
    duplicateWorker: duplicate.outcome,
    groupRule: group.outcome,
  };
}

/** 422 Invalid is a refusal by the rules; a 409 or 5xx is unsettled; anything else is thrown. */
async function outcome(
  write: () => Promise<unknown>,
): Promise<{ outcome: Outcome; version?: string | undefined }> {
  try {
    return { outcome: 'accepted', version: resourceVersionOf(await write()) };
  } catch (error) {
    if (error instanceof KubeApiError && error.status === 422) return { outcome: 'refused' };
    // A 409 (the handler changed under the write) or a 5xx while the handler is rebuilt: try again.
    if (error instanceof KubeApiError && (error.status === 409 || error.status >= 500))
      return { outcome: 'unsettled' };
    throw error;
  }
}
