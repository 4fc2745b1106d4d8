// Reads from the API server, parsed with the contract's zod schemas and bounded: lists page 500
// objects at a time (as kubectl does) up to a limit, and an object that does not parse is skipped
// with a warning rather than trusted.
import { z } from 'zod';
import {
  HeartbeatLease,
  LeaseRequestObject,
  SimlockError,
  WorkerObject,
  heartbeatLeaseName,
} from '../api/index.js';
import {
  coordinationLeasePath,
  isNotFound,
  simlockPath,
  type KubeClient,
} from '../runtime/index.js';

const PAGE_SIZE = 500;
/** More than this many objects in one listing is a mistake we refuse to print. */
const MAX_ITEMS = 20_000;

const ListPage = z.object({
  items: z.array(z.unknown()).max(PAGE_SIZE * 2),
  metadata: z.object({ continue: z.string().max(4096).optional() }).optional(),
});

export interface Parsed<T> {
  /** As the API server sent it (validated): what -o json and -o yaml print. */
  raw: Record<string, unknown>;
  object: T;
}

export type Warn = (message: string) => void;

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function nameOf(raw: unknown): string {
  const metadata = isRecord(raw) ? raw.metadata : undefined;
  const name = isRecord(metadata) ? metadata.name : undefined;
  return typeof name === 'string' ? name : '<unnamed>';
}

function parseItem<T>(
  schema: z.ZodType<T>,
  raw: unknown,
  what: string,
  warn: Warn,
): Parsed<T> | undefined {
  const parsed = schema.safeParse(raw);
  if (!parsed.success || !isRecord(raw)) {
    const issue = parsed.success ? undefined : parsed.error.issues[0];
    const path = issue ? issue.path.join('.') : '';
    warn(`skipping ${what} ${nameOf(raw)}: ${path ? `${path}: ` : ''}${issue?.message ?? ''}`);
    return undefined;
  }
  return { raw, object: parsed.data };
}

export async function listObjects<T>(
  client: KubeClient,
  path: string,
  schema: z.ZodType<T>,
  what: string,
  warn: Warn,
  query: { labelSelector?: string | undefined; fieldSelector?: string | undefined } = {},
): Promise<Parsed<T>[]> {
  const result: Parsed<T>[] = [];
  let continueToken: string | undefined;
  do {
    const body = ListPage.safeParse(
      await client.get(path, { query: { ...query, limit: PAGE_SIZE, continue: continueToken } }),
    );
    if (!body.success) throw new SimlockError('INTERNAL', `unreadable list of ${what}s`);
    for (const raw of body.data.items) {
      const item = parseItem(schema, raw, what, warn);
      if (item) result.push(item);
    }
    if (result.length > MAX_ITEMS) {
      throw new SimlockError('INTERNAL', `more than ${MAX_ITEMS} ${what}s; narrow the listing`);
    }
    continueToken = body.data.metadata?.continue || undefined;
  } while (continueToken !== undefined);
  return result;
}

export async function getObject<T>(
  client: KubeClient,
  path: string,
  schema: z.ZodType<T>,
  what: string,
): Promise<Parsed<T>> {
  const raw = await client.get(path);
  const item = parseItem(schema, raw, what, () => undefined);
  if (!item) throw new SimlockError('INTERNAL', `the API server sent an unreadable ${what}`);
  return item;
}

/**
 * Reads the request `name` in `namespace`; one that is not there is NOT_FOUND, named as the
 * caller calls it (`lease` for the holder's verbs, `request` for why).
 */
export async function readRequest(
  client: KubeClient,
  namespace: string,
  name: string,
  noun: 'lease' | 'request' = 'lease',
): Promise<LeaseRequestObject> {
  try {
    const path = simlockPath('leaseRequest', { namespace, name });
    return (await getObject(client, path, LeaseRequestObject, 'leaserequest')).object;
  } catch (error) {
    if (isNotFound(error))
      throw new SimlockError(
        'NOT_FOUND',
        `${noun} "${name}" not found in namespace "${namespace}"`,
      );
    throw error;
  }
}

/** Parses an object the API server answered a write with. */
export function parseAnswer<T>(schema: z.ZodType<T>, raw: unknown, what: string): Parsed<T> {
  const item = parseItem(schema, raw, what, () => undefined);
  if (!item)
    throw new SimlockError('INTERNAL', `the API server answered with an unreadable ${what}`);
  return item;
}

export function listRequests(
  client: KubeClient,
  namespace: string | undefined,
  warn: Warn,
): Promise<Parsed<LeaseRequestObject>[]> {
  return listObjects(
    client,
    simlockPath('leaseRequest', { namespace }),
    LeaseRequestObject,
    'leaserequest',
    warn,
  );
}

/**
 * Whether a request holds a lease (Granted) or is letting one go (Released and being deleted: the
 * agent reclaims its device). A request released and left (expired, idle) holds none: its Lease
 * is gone or going.
 */
export function holdsLease(request: LeaseRequestObject): boolean {
  const phase = request.status?.phase;
  return (
    phase === 'Granted' ||
    (phase === 'Released' && request.metadata.deletionTimestamp !== undefined)
  );
}

/**
 * The leases, as their requests say them (ADR 0034: a Lease lives in its worker's namespace, where
 * its holder need not read): the requests that hold one, in `namespace` or in all.
 */
export async function listHeldLeases(
  client: KubeClient,
  namespace: string | undefined,
  warn: Warn,
): Promise<Parsed<LeaseRequestObject>[]> {
  return (await listRequests(client, namespace, warn)).filter((request) =>
    holdsLease(request.object),
  );
}

export function listWorkers(
  client: KubeClient,
  warn: Warn,
  labelSelector?: string,
): Promise<Parsed<WorkerObject>[]> {
  return listObjects(client, simlockPath('worker'), WorkerObject, 'worker', warn, {
    labelSelector,
  });
}

/**
 * Workers for naming them by label: a user who may not list Workers (they are cluster-scoped)
 * still gets an answer, with worker names instead of labels.
 */
export async function workersForLabels(client: KubeClient, warn: Warn): Promise<WorkerObject[]> {
  try {
    return (await listWorkers(client, warn)).map((worker) => worker.object);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    warn(`cannot list workers (${message}); showing worker names`);
    return [];
  }
}

/** A worker's heartbeat, from its coordination.k8s.io Lease `worker-<name>`. */
export interface Heartbeat {
  renewTime?: string | undefined;
  leaseDurationSeconds?: number | undefined;
}

/**
 * Heartbeats by worker name, from the coordination.k8s.io Leases `worker-<name>` in the simlock
 * namespace; undefined when they cannot be read at all (no such namespace, or forbidden).
 */
export async function heartbeats(
  client: KubeClient,
  simlockNamespace: string,
  workers: readonly string[],
  warn: Warn,
): Promise<Map<string, Heartbeat> | undefined> {
  let leases: Parsed<z.infer<typeof HeartbeatLease>>[];
  try {
    leases = await listObjects(
      client,
      coordinationLeasePath(simlockNamespace),
      HeartbeatLease,
      'heartbeat lease',
      () => undefined,
    );
  } catch (error) {
    if (!isNotFound(error)) {
      const message = error instanceof Error ? error.message : String(error);
      warn(`cannot read heartbeats in ${simlockNamespace} (${message})`);
    }
    return undefined;
  }
  const byLeaseName = new Map(leases.map((lease) => [lease.object.metadata.name, lease.object]));
  const result = new Map<string, Heartbeat>();
  for (const worker of workers) {
    const spec = byLeaseName.get(heartbeatLeaseName(worker))?.spec;
    if (spec) result.set(worker, spec);
  }
  return result;
}
