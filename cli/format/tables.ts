// kubectl-style tables: upper-case headers, columns padded to their widest cell plus three spaces,
// `<none>` for an empty cell, `-o wide` adding columns, `--no-headers` dropping the header. Plus
// the tables of simlock leases (their requests), Workers and devices. Pure: objects and the time
// in, lines out.
import {
  EXPIRING_SOON_CONDITION,
  type LeaseRequestObject,
  type WorkerObject,
} from '../../api/index.js';
import type { LeaseUse } from '../../client/index.js';

export interface Column<Row> {
  header: string;
  cell: (row: Row) => string | number | boolean | undefined;
  /** Shown only with -o wide. */
  wide?: boolean;
}

export interface TableOptions {
  wide?: boolean;
  noHeaders?: boolean;
}

const GAP = '   ';

export function renderTable<Row>(
  columns: readonly Column<Row>[],
  rows: readonly Row[],
  options: TableOptions = {},
): string[] {
  const shown = columns.filter((column) => options.wide === true || column.wide !== true);
  const cells = rows.map((row) =>
    shown.map((column) => {
      const value = column.cell(row);
      return value === undefined || value === '' ? '<none>' : String(value);
    }),
  );
  const table = options.noHeaders ? cells : [shown.map((c) => c.header.toUpperCase()), ...cells];
  const widths = shown.map((_, index) =>
    Math.max(...table.map((line) => line[index]?.length ?? 0)),
  );
  return table.map((line) =>
    line
      .map((cell, index) => (index === line.length - 1 ? cell : cell.padEnd(widths[index] ?? 0)))
      .join(GAP)
      .trimEnd(),
  );
}

/** kubectl's human duration: 42s, 3m12s, 45m, 5h10m, 30h, 3d4h, 12d, 2y. */
export function humanDuration(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  const minutes = Math.floor(seconds / 60);
  const hours = Math.floor(minutes / 60);
  const days = Math.floor(hours / 24);
  if (seconds < 120) return `${seconds}s`;
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (hours < 3) return `${minutes}m`;
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (days < 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (days < 365 * 2) return `${days}d`;
  return `${Math.floor(days / 365)}y`;
}

function timeOf(value: string | Date | undefined): number | undefined {
  if (value === undefined) return undefined;
  const time = value instanceof Date ? value.getTime() : Date.parse(value);
  return Number.isFinite(time) ? time : undefined;
}

/** Age of an object, as kubectl's AGE column. */
export function age(created: string | Date | undefined, now: number): string | undefined {
  const time = timeOf(created);
  return time === undefined ? undefined : humanDuration(now - time);
}

// ---------------------------------------------------------------------------------------------
// simlock leases, as their requests say them (ADR 0034)

/** What only the Lease says, for IDLE: undefined when it could not be read. */
export type LeaseUseOf = (request: LeaseRequestObject) => LeaseUse | undefined;

/** The use of each request's Lease from `leaseUses`' map (keyed namespace/name). */
export function leaseUseIn(uses: ReadonlyMap<string, LeaseUse>): LeaseUseOf {
  return (request) => uses.get(`${request.metadata.namespace ?? ''}/${request.metadata.name}`);
}

export function leaseColumns(
  now: number,
  withNamespace: boolean,
  useOf: LeaseUseOf = () => undefined,
): Column<LeaseRequestObject>[] {
  const columns: Column<LeaseRequestObject>[] = [
    { header: 'name', cell: (lease) => lease.metadata.name },
    { header: 'worker', cell: (lease) => lease.status?.worker },
    { header: 'device', cell: (lease) => lease.status?.device?.name },
    { header: 'phase', cell: leasePhaseOf },
    {
      header: 'expires',
      cell: (lease) =>
        lease.status?.expiresAt === undefined
          ? undefined
          : expires(lease.status.expiresAt, now, expiringSoon(lease)),
    },
    { header: 'idle', cell: (lease) => idle(lease, useOf(lease), now) },
    { header: 'device-id', cell: (lease) => lease.status?.device?.id, wide: true },
    { header: 'holder', cell: (lease) => lease.spec.holder, wide: true },
    { header: 'age', cell: (lease) => age(dispatchedAt(lease), now), wide: true },
  ];
  return withNamespace
    ? [{ header: 'namespace', cell: (lease) => lease.metadata.namespace }, ...columns]
    : columns;
}

/**
 * PHASE: the request's (Granted, or Released while it is let go); `Recovering` while granted and
 * its device is booted again after a crash (as kubectl's STATUS says Terminating of a pod still
 * Running).
 */
export function leasePhaseOf(lease: LeaseRequestObject): string {
  const status = lease.status;
  if (status?.phase === 'Granted' && status.recovery !== undefined) return 'Recovering';
  return status?.phase ?? 'Pending';
}

/** The controller's warning on the request (its time is a controller flag): `ExpiringSoon`. */
function expiringSoon(lease: LeaseRequestObject): boolean {
  return (
    lease.status?.conditions?.some(
      (condition) => condition.type === EXPIRING_SOON_CONDITION && condition.status === 'True',
    ) ?? false
  );
}

/**
 * When the lease was dispatched (its Lease made), which AGE counts from: its expiry less the length
 * it counts (as granted, else as asked); the request's creation when no expiry is written.
 */
function dispatchedAt(lease: LeaseRequestObject): string | Date | undefined {
  const expiresAt = timeOf(lease.status?.expiresAt);
  if (expiresAt === undefined) return lease.metadata.creationTimestamp;
  const counted = lease.status?.durationSeconds ?? lease.spec.durationSeconds;
  return new Date(expiresAt - counted * 1000);
}

/**
 * IDLE, as the controller counts idle time (ADR 0008): `busy` while an exec runs (the proxy's
 * running record reaches past now), else how long since the last exec ended, or since the grant
 * when none ran. Only for a granted lease whose Lease could be read (the record is only there).
 */
export function idle(
  lease: LeaseRequestObject,
  use: LeaseUse | undefined,
  now: number,
): string | undefined {
  if (lease.status?.phase !== 'Granted' || use === undefined) return undefined;
  const lastExecAt = timeOf(use.activity?.lastExecAt);
  const runningUntil = timeOf(use.activity?.runningUntil);
  // An ended exec's record has runningUntil at its end, the same as lastExecAt.
  if (runningUntil !== undefined && runningUntil > now && runningUntil !== lastExecAt)
    return 'busy';
  const since = Math.max(
    timeOf(use.grantedAt) ?? -Infinity,
    lastExecAt ?? -Infinity,
    runningUntil ?? -Infinity,
  );
  return Number.isFinite(since) ? humanDuration(now - since) : undefined;
}

/** "in 59m", "in 4m, expiring soon" (as the controller's condition on its request says), "expired". */
export function expires(expiresAt: string, now: number, expiringSoon = false): string {
  const time = timeOf(expiresAt);
  if (time === undefined) return '<unknown>';
  if (time <= now) return 'expired';
  return `in ${humanDuration(time - now)}${expiringSoon ? ', expiring soon' : ''}`;
}

// ---------------------------------------------------------------------------------------------
// Workers

/** A worker's heartbeat, from its coordination.k8s.io Lease `worker-<name>`. */
export interface Heartbeat {
  renewTime?: string | undefined;
  leaseDurationSeconds?: number | undefined;
}

/** What the CONNECTED column says; `unknown` when heartbeats could not be read at all. */
export type Connection = 'true' | 'false' | 'unknown';

/** Connected while the heartbeat's last renewal is younger than its duration (as a node lease). */
export function connection(heartbeat: Heartbeat | undefined, now: number): 'true' | 'false' {
  const renewed = timeOf(heartbeat?.renewTime);
  if (renewed === undefined) return 'false';
  const durationSeconds = heartbeat?.leaseDurationSeconds ?? 40;
  return renewed + durationSeconds * 1000 > now ? 'true' : 'false';
}

export function workerColumns(
  now: number,
  connected: (name: string) => Connection,
): Column<WorkerObject>[] {
  return [
    { header: 'name', cell: (worker) => worker.metadata.name },
    { header: 'label', cell: (worker) => worker.spec.label },
    { header: 'drained', cell: (worker) => worker.spec.drained },
    { header: 'health', cell: (worker) => worker.status?.health },
    { header: 'running', cell: (worker) => running(worker) },
    { header: 'devices', cell: (worker) => worker.status?.devices.length ?? 0 },
    { header: 'connected', cell: (worker) => connected(worker.metadata.name) },
    { header: 'queue', cell: (worker) => worker.status?.queueDepth, wide: true },
    { header: 'endpoint', cell: (worker) => worker.status?.endpoint, wide: true },
    { header: 'agent', cell: (worker) => worker.status?.agentVersion, wide: true },
    { header: 'age', cell: (worker) => age(worker.metadata.creationTimestamp, now), wide: true },
  ];
}

/** running/limit over all platforms, as the agent reports it. */
export function running(worker: WorkerObject): string | undefined {
  const global = worker.status?.capacity?.global;
  if (global) return `${global.running}/${global.limit}`;
  return worker.status?.slots;
}

// ---------------------------------------------------------------------------------------------
// Devices (from Worker status.devices)

export interface DeviceRow {
  worker: string;
  device: NonNullable<WorkerObject['status']>['devices'][number];
}

export function deviceRows(workers: readonly WorkerObject[]): DeviceRow[] {
  return workers.flatMap((worker) =>
    (worker.status?.devices ?? []).map((device) => ({ worker: worker.metadata.name, device })),
  );
}

export function deviceColumns(now = Date.now()): Column<DeviceRow>[] {
  return [
    { header: 'worker', cell: (row) => row.worker },
    { header: 'id', cell: (row) => row.device.id },
    { header: 'name', cell: (row) => row.device.name },
    { header: 'model', cell: (row) => row.device.model },
    { header: 'platform', cell: (row) => row.device.platform },
    { header: 'os', cell: (row) => row.device.os },
    { header: 'physical', cell: (row) => row.device.physical },
    { header: 'state', cell: (row) => row.device.state },
    { header: 'presence', cell: (row) => presence(row.device.presence) },
    { header: 'class', cell: (row) => row.device.class, wide: true },
    {
      header: 'quarantined',
      cell: (row) => quarantined(row.device.quarantine, now),
      wide: true,
    },
  ];
}

/**
 * How long and why a device is out of service, and what comes next: "12m, retry 2 in 4m: boot
 * failed: …", "2h, waits for operator: …" (retries used up); empty when it is not quarantined.
 */
export function quarantined(
  value: DeviceRow['device']['quarantine'],
  now: number,
): string | undefined {
  if (value === undefined) return undefined;
  const since = humanDuration(now - Date.parse(value.since));
  const next =
    value.nextRetryAt !== undefined
      ? `, retry ${(value.retries ?? 0) + 1} in ${humanDuration(Math.max(0, Date.parse(value.nextRetryAt) - now))}`
      : value.retries !== undefined
        ? ', waits for operator'
        : '';
  return `${since}${next}: ${value.reason}`;
}

/** `present`, the reason it is not (`locked`, `untrusted`, `not-present`), or empty: never read. */
export function presence(value: DeviceRow['device']['presence']): string | undefined {
  if (value === undefined) return undefined;
  return value.present ? 'present' : (value.reason ?? 'not-present');
}
