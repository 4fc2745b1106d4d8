// The Attention page's rows: what in the fleet needs a person now, each with what to do about it
// (the command, where one fixes it). Pure: computed from the workers, requests and leases the page
// already holds, the controller's maximum lease duration and the page's thresholds. The words
// for a worker's state are the contract's reason texts (api/reasons.ts), never typed again here.
import {
  DEFAULT_MAX_LEASE_SECONDS,
  PROTOCOL,
  formatDuration as flagDuration,
  reasonText,
} from '../../api/index.js';
import {
  activeLeases,
  ageOf,
  formatDuration,
  heartbeatState,
  platformSlots,
  quarantineText,
  waitingRequests,
  workerTitle,
} from './views.js';
import {
  objectKeyOf,
  type AttentionSettings,
  type LeaseView,
  type RequestView,
  type WorkerView,
} from './wire.js';

export const DEFAULT_ATTENTION: AttentionSettings = {
  maxLeaseSeconds: DEFAULT_MAX_LEASE_SECONDS,
  waitingOverSeconds: 10 * 60,
  drainedOverSeconds: 60 * 60,
};

/** A lease that has lived this share of the maximum is near it. */
const NEAR_MAXIMUM = 0.9;
/** `extend --by` suggests at most this much. */
const EXTEND_BY_SECONDS = 30 * 60;
/** The agent on a host checks itself with this (docs/AGENT.md, the doctor). */
const DOCTOR = 'simlock-agent doctor --config agent.yaml';

export type AttentionKind =
  | 'disconnected'
  | 'incompatible'
  | 'unhealthy'
  | 'not-ready'
  | 'drained'
  | 'ram-budget'
  | 'quarantined'
  | 'waiting'
  | 'lease';

/** Kinds in the order the page lists them: the fleet first, then requests, then leases. */
const KIND_ORDER: readonly AttentionKind[] = [
  'disconnected',
  'incompatible',
  'unhealthy',
  'not-ready',
  'quarantined',
  'drained',
  'ram-budget',
  'waiting',
  'lease',
];

export interface AttentionItem {
  kind: AttentionKind;
  /** Unique among the items: the kind and what it is about. */
  key: string;
  /** Waits for a person (true), or may still end by itself (a retry due, an agent starting). */
  urgent: boolean;
  /** What it is called: "Not connected", "Quarantined", "Lease ending". */
  title: string;
  /** Who or what: a worker's label, "iPhone 16 (…) on worker-a", "team-a/ci-7". */
  subject: string;
  /** What is the matter, in a line. */
  detail: string;
  /** What fixes it, in words. */
  fix: string;
  /** The command that does, when one does. */
  command?: string;
  worker?: string;
  device?: string;
  request?: { namespace: string; name: string };
}

export interface AttentionInput {
  workers: Iterable<WorkerView>;
  requests: ReadonlyMap<string, RequestView>;
  leases: Iterable<LeaseView>;
  /** False when the console does not watch heartbeats: who is connected is unknown. */
  heartbeats: boolean;
}

// The contract's words for a worker's state (the platform does not change these texts).
const said = (reason: Parameters<typeof reasonText>[0]) => reasonText(reason, 'ios');

function workerItems(
  worker: WorkerView,
  settings: AttentionSettings,
  heartbeats: boolean,
  now: number,
): AttentionItem[] {
  const title = workerTitle(worker);
  const base = { worker: worker.name, subject: title };
  /** An item about the worker as a whole, keyed and titled by its kind (the contract's word). */
  const about = (
    kind: 'disconnected' | 'incompatible' | 'unhealthy' | 'not-ready' | 'drained',
    fields: Pick<AttentionItem, 'urgent' | 'detail' | 'fix' | 'command'>,
  ): AttentionItem => ({
    ...base,
    kind,
    key: `${kind}:${worker.name}`,
    title: said({ reason: kind }),
    ...fields,
  });
  const items: AttentionItem[] = [];
  const beat = heartbeats ? heartbeatState(worker, now) : 'connected';
  if (beat !== 'connected') {
    const age = ageOf(worker.heartbeat?.renewTime, now);
    items.push(
      about('disconnected', {
        urgent: true,
        detail:
          age === undefined
            ? 'its agent has never renewed its heartbeat'
            : `its agent last renewed its heartbeat ${formatDuration(age)} ago`,
        fix: 'Start its agent again or bring its host back on the network; on the host:',
        command: DOCTOR,
      }),
    );
    // Nothing else the agent reported can be believed while it is away.
    return items;
  }
  if (
    worker.protocol !== undefined &&
    (worker.protocol < PROTOCOL.min || worker.protocol > PROTOCOL.max)
  ) {
    const speaks = [...new Set<number>([PROTOCOL.min, PROTOCOL.max])].join('–');
    items.push(
      about('incompatible', {
        urgent: true,
        detail: `its agent ${worker.agentVersion ?? ''} speaks protocol ${worker.protocol}; this simlock speaks ${speaks}`,
        fix: "Install the agent of this simlock's release on its host",
      }),
    );
  }
  if (worker.health === 'unhealthy') {
    items.push(
      about('unhealthy', {
        urgent: true,
        detail: 'its agent says it is unhealthy',
        fix: 'See what its agent reports; on the host:',
        command: DOCTOR,
      }),
    );
  }
  if (worker.ready === false || worker.health === undefined) {
    items.push(
      about('not-ready', {
        // An agent that is starting gets there by itself; one that stays needs a look.
        urgent: worker.health !== 'starting',
        detail:
          worker.health === undefined
            ? 'its agent has written no status'
            : 'its agent has not read its drivers yet (no catalog or capacity)',
        fix: 'See what its drivers lack; on the host:',
        command: DOCTOR,
      }),
    );
  }
  const drainedFor = worker.drained ? ageOf(worker.drainedSince, now) : undefined;
  if (drainedFor !== undefined && drainedFor >= settings.drainedOverSeconds * 1000) {
    items.push(
      about('drained', {
        urgent: true,
        detail: `drained for ${formatDuration(drainedFor)} at least`,
        fix: 'Undrain it once its work is done:',
        command: `kubectl simlock worker undrain ${worker.name}`,
      }),
    );
  }
  for (const slot of platformSlots(worker)) {
    if (!slot.atRamBudget) continue;
    items.push({
      ...base,
      kind: 'ram-budget',
      key: `ram-budget:${worker.name}:${slot.platform}`,
      urgent: false,
      title: said({ reason: 'full', capacityReason: 'ram-budget' }),
      detail: `${slot.name}: ${slot.running} of ${slot.limit} running, no RAM for another`,
      fix: `Raise limits.platforms.${slot.platform}.ramBudgetMb in its agent's config, or free memory on the host`,
    });
  }
  for (const device of worker.devices) {
    if (!device.quarantine) continue;
    items.push({
      ...base,
      kind: 'quarantined',
      key: `quarantined:${worker.name}:${device.id}`,
      // A retry is due: the agent may yet bring it back. Without one it waits for an operator.
      urgent: device.quarantine.nextRetryAt === undefined,
      title: 'Quarantined',
      subject: `${device.name} on ${title}`,
      device: device.id,
      detail: quarantineText(device.quarantine, now),
      fix: 'Put it back in service once its cause is fixed:',
      command: `kubectl simlock device unquarantine ${worker.name} ${device.id}`,
    });
  }
  return items;
}

function waitingItem(request: RequestView, settings: AttentionSettings, now: number) {
  const waited = ageOf(request.queuedAt ?? request.createdAt, now);
  if (waited === undefined || waited < settings.waitingOverSeconds * 1000) return undefined;
  const item: AttentionItem = {
    kind: 'waiting',
    key: `waiting:${objectKeyOf(request)}`,
    urgent: true,
    title: 'Waiting',
    subject: objectKeyOf(request),
    request: { namespace: request.namespace, name: request.name },
    detail: `waiting for ${formatDuration(waited)}${request.summary ? `: ${request.summary}` : ''}`,
    fix: 'Its page says, worker by worker, why it waits',
  };
  return item;
}

function leaseItem(
  lease: LeaseView,
  request: RequestView | undefined,
  settings: AttentionSettings,
  now: number,
): AttentionItem | undefined {
  const expiresAt = Date.parse(lease.expiresAt);
  if (Number.isNaN(expiresAt)) return undefined;
  const max = settings.maxLeaseSeconds * 1000;
  // A lease's lifetime counts from its dispatch: expiry minus the duration asked for.
  const duration = request ? request.spec.durationSeconds * 1000 : undefined;
  const lived = duration === undefined ? undefined : now - (expiresAt - duration);
  const nearMaximum = lived !== undefined && lived >= NEAR_MAXIMUM * max;
  if (request?.expiringSoon !== true && !nearMaximum) return undefined;
  const room = duration === undefined ? undefined : Math.floor((max - duration) / 1000);
  const left = expiresAt > now ? `expires in ${formatDuration(expiresAt - now)}` : 'expired';
  const base = {
    kind: 'lease' as const,
    key: `lease:${objectKeyOf(lease)}`,
    urgent: true,
    title: 'Lease ending',
    subject: objectKeyOf(lease),
    request: { namespace: lease.namespace, name: lease.name },
    worker: lease.worker,
  };
  const holder = lease.holder ? ` (holder ${lease.holder})` : '';
  if (room !== undefined && room < 60) {
    return {
      ...base,
      detail: `${left}${holder}; at the maximum lease duration (${formatDuration(max)}): it cannot be extended`,
      fix: 'Its holder finishes before then, or leases a device again',
    };
  }
  const by = room === undefined ? EXTEND_BY_SECONDS : Math.min(room, EXTEND_BY_SECONDS);
  const lifetime =
    lived === undefined ? '' : `; lived ${formatDuration(lived)} of at most ${formatDuration(max)}`;
  return {
    ...base,
    detail: `${left}${holder}${lifetime}`,
    fix: 'Extend it if its holder still needs it:',
    command: `kubectl simlock extend ${lease.name} --by ${flagDuration(by)} -n ${lease.namespace}`,
  };
}

/** Everything that needs a person, urgent first, then in the page's order of kinds. */
export function attentionItems(
  input: AttentionInput,
  settings: AttentionSettings,
  now: number,
): AttentionItem[] {
  const items: AttentionItem[] = [];
  for (const worker of input.workers)
    items.push(...workerItems(worker, settings, input.heartbeats, now));
  for (const request of waitingRequests(input.requests.values())) {
    const item = waitingItem(request, settings, now);
    if (item) items.push(item);
  }
  for (const lease of activeLeases(input.leases)) {
    const item = leaseItem(lease, input.requests.get(objectKeyOf(lease)), settings, now);
    if (item) items.push(item);
  }
  return items.sort(
    (a, b) =>
      Number(b.urgent) - Number(a.urgent) ||
      KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind) ||
      a.subject.localeCompare(b.subject) ||
      a.key.localeCompare(b.key),
  );
}
