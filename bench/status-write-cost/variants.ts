// The LeaseRequest CRD in the variants the benchmark compares, made from crds/ in memory:
//   generated      crds/ as it is
//   no-status-cel  the rule on each status.workers item removed (the spec's rules stay)
//   no-cel         every x-kubernetes-validations removed
//   map-workers    every rule kept; status.workers a list-map keyed by worker, as before ADR 0017
//                  (managed fields then track each worker's entry, not the list as one field, and
//                  the API server refuses a worker named twice)
//   grouped-workers every rule kept; status.workerGroups added beside status.workers: the same
//                  reasons grouped, [{reason, capacityReason?, workers: [name, ...]}] (atomic
//                  lists), the item rule on each group; the workload then writes workerGroups
//                  instead of workers (a form being weighed, not the contract: issue 36)
// What each variant should make the API server refuse is what the probes check (apply-variant.ts).
import { Crd, type Json } from '../harness/index.js';

export const VARIANTS = [
  'generated',
  'no-status-cel',
  'no-cel',
  'map-workers',
  'grouped-workers',
] as const;
export type Variant = (typeof VARIANTS)[number];

const RULES = 'x-kubernetes-validations';

/** What the API server should refuse under a variant. */
export interface Expectation {
  /** A status.workers item with capacityReason but not reason full. */
  itemRule: boolean;
  /** A spec.durationSeconds that shrinks (a transition rule, oldSelf). */
  specRules: boolean;
  /** A worker named twice in status.workers (the list-map's key). */
  duplicateWorker: boolean;
  /**
   * A status.workerGroups group with capacityReason but not reason full. Where the schema has no
   * workerGroups the API server prunes the field and accepts the write.
   */
  groupRule: boolean;
}

export const EXPECTED: Record<Variant, Expectation> = {
  generated: { itemRule: true, specRules: true, duplicateWorker: false, groupRule: false },
  'no-status-cel': { itemRule: false, specRules: true, duplicateWorker: false, groupRule: false },
  'no-cel': { itemRule: false, specRules: false, duplicateWorker: false, groupRule: false },
  'map-workers': { itemRule: true, specRules: true, duplicateWorker: true, groupRule: false },
  'grouped-workers': { itemRule: true, specRules: true, duplicateWorker: false, groupRule: true },
};

/** The variants whose Waiting statuses carry status.workerGroups instead of status.workers. */
export function writesGroups(variant: Variant): boolean {
  return variant === 'grouped-workers';
}

const STATUS_PROPERTIES = ['properties', 'status', 'properties'];
const WORKERS = [...STATUS_PROPERTIES, 'workers'];

/** The CRD as `variant` has it, and how many rules (CEL expressions) it took out. */
export function crdVariant(crd: Crd, variant: Variant): { crd: Crd; removedRules: number } {
  const copy = Crd.parse(structuredClone(crd));
  let removedRules = 0;
  let changedLists = 0;
  for (const version of copy.spec.versions) {
    const schema = version.schema.openAPIV3Schema;
    if (variant === 'no-cel') removedRules += removeAllRules(schema);
    if (variant === 'no-status-cel') removedRules += removeRules(at(schema, [...WORKERS, 'items']));
    if (variant === 'map-workers') changedLists += makeListMap(at(schema, WORKERS));
    if (variant === 'grouped-workers')
      changedLists += addWorkerGroups(at(schema, STATUS_PROPERTIES));
  }
  // A variant that changed nothing would compare crds/ with itself: refuse rather than mislead.
  if (variant !== 'generated' && removedRules === 0 && changedLists === 0)
    throw new Error(`${variant}: the CRD has nothing to change (has crds/ changed?)`);
  return { crd: copy, removedRules };
}

/** An atomic list made a list-map keyed by worker; 1 if it was atomic. */
function makeListMap(node: Json | undefined): number {
  if (node === undefined || !isRecord(node) || node['x-kubernetes-list-type'] !== 'atomic')
    return 0;
  node['x-kubernetes-list-type'] = 'map';
  node['x-kubernetes-list-map-keys'] = ['worker'];
  return 1;
}

/**
 * status.workerGroups added beside status.workers, made from its item schema: each group the
 * item's reason and capacityReason (their enums) and its rule, and workers the names (an atomic
 * list of the item's worker strings, as many at most as status.workers holds). A group per reason
 * and capacity reason at most. 1 if it was added.
 */
function addWorkerGroups(properties: Json | undefined): number {
  if (properties === undefined || !isRecord(properties)) return 0;
  const workers = properties.workers;
  if (workers === undefined || !isRecord(workers) || 'workerGroups' in properties) return 0;
  const { items: item, maxItems } = workers;
  if (item === undefined || !isRecord(item) || typeof maxItems !== 'number') return 0;
  const fields = item.properties;
  if (fields === undefined || !isRecord(fields)) return 0;
  const { worker, reason, capacityReason } = fields;
  if (worker === undefined || reason === undefined || capacityReason === undefined) return 0;
  const count = (node: Json) => (isRecord(node) && Array.isArray(node.enum) ? node.enum.length : 0);
  const group: { [key: string]: Json } = {
    type: 'object',
    properties: {
      reason: structuredClone(reason),
      capacityReason: structuredClone(capacityReason),
      workers: {
        type: 'array',
        'x-kubernetes-list-type': 'atomic',
        maxItems,
        items: structuredClone(worker),
      },
    },
    required: ['reason', 'workers'],
  };
  // The capacity reason's rule only: the item's rule on worker and names (ADR 0033) has no
  // counterpart in a group, which names its workers in `workers`.
  const rules = Array.isArray(item[RULES])
    ? item[RULES].filter((rule) => !JSON.stringify(rule).includes('self.names'))
    : [];
  if (rules.length > 0) group[RULES] = structuredClone(rules);
  properties.workerGroups = {
    description: 'The reasons of status.workers grouped: the workers of each reason, by name.',
    type: 'array',
    'x-kubernetes-list-type': 'atomic',
    maxItems: count(reason) * (count(capacityReason) + 1),
    items: group,
  };
  return 1;
}

/** Every x-kubernetes-validations rule in a schema, counted. */
export function countRules(schema: Json): number {
  if (Array.isArray(schema)) return schema.reduce((sum: number, item) => sum + countRules(item), 0);
  if (!isRecord(schema)) return 0;
  let count = 0;
  for (const [key, value] of Object.entries(schema))
    count += key === RULES && Array.isArray(value) ? value.length : countRules(value);
  return count;
}

function removeAllRules(schema: Json): number {
  if (Array.isArray(schema))
    return schema.reduce((sum: number, item) => sum + removeAllRules(item), 0);
  if (!isRecord(schema)) return 0;
  let removed = removeRules(schema);
  for (const value of Object.values(schema)) removed += removeAllRules(value);
  return removed;
}

function removeRules(node: Json | undefined): number {
  if (node === undefined || !isRecord(node)) return 0;
  const rules = node[RULES];
  if (rules === undefined) return 0;
  delete node[RULES];
  return Array.isArray(rules) ? rules.length : 1;
}

function at(node: Json, path: readonly string[]): Json | undefined {
  let current: Json | undefined = node;
  for (const key of path)
    current = current !== undefined && isRecord(current) ? current[key] : undefined;
  return current;
}

function isRecord(value: Json): value is { [key: string]: Json } {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
