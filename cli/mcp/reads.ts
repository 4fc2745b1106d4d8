// The MCP tools that read: why_waiting, list_devices, list_leases. Their text is the plugin's own
// lines and tables (cli/format/), their structured content the objects as the contract parses
// them. By default a session sees its own requests and leases (those naming its holder session).
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { SimlockError, reasonsByWorker, type HeldLease } from '../../api/index.js';
import { answerWhyOver, leaseUses, readableLeases } from '../../client/index.js';
import { isUnfinished, requestListLines } from '../format/requests.js';
import {
  deviceColumns,
  deviceRows,
  leaseColumns,
  leaseUseIn,
  renderTable,
} from '../format/tables.js';
import type { ListDevicesInput, ListLeasesInput, WhyWaitingInput } from './schemas.js';
import { answer, type Args } from './results.js';
import type { McpSession } from './session.js';

export async function whyWaitingTool(
  session: McpSession,
  args: Args<typeof WhyWaitingInput>,
): Promise<CallToolResult> {
  const all = args.all === true;
  const requests = (await session.client.requests()).filter(
    (request) =>
      isUnfinished(request) && (all || request.spec.holderSession === session.holder.name),
  );
  const workers = await session.client.workers().catch(() => []);
  // An agent's own queue holds its local clients' requests, never this session's.
  const shown = all
    ? workers
    : workers.map((worker) =>
        worker.status ? { ...worker, status: { ...worker.status, queue: [] } } : worker,
      );
  const now = Date.now();
  // Under each waiting request, what would unblock it: the routing stages asked about changed
  // views (ADR 0026), over one read of the leases held (their requests).
  const waiting = requests.some((request) => request.status?.phase === 'Waiting');
  const leases: HeldLease[] = waiting
    ? await readableLeases(session.client.kube, session.namespace, () => undefined).catch(() => [])
    : [];
  const whyOf = (request: (typeof requests)[number]) =>
    request.status?.phase === 'Waiting' ? answerWhyOver(request, workers, leases, now) : undefined;
  const lines = requestListLines(requests, shown, {
    now,
    extra: (request) => (whyOf(request)?.lines ?? []).map((line) => `  unblock: ${line}`),
  });
  const text =
    lines.length > 0
      ? lines.join('\n')
      : all
        ? `No waiting requests in ${session.namespace}.`
        : 'No request of this session is waiting.';
  return answer(text, {
    requests: requests.map((request) => ({
      name: request.metadata.name,
      phase: request.status?.phase ?? 'Pending',
      position: request.status?.position,
      workers: reasonsByWorker(request.status),
      // While Waiting: when the controller expects to grant it, and how it worked that out.
      estimate: request.status?.phase === 'Waiting' ? request.status.estimate : undefined,
      // While Dispatched to a worker that makes or boots the device: the stage and its estimate.
      progress: request.status?.phase === 'Dispatched' ? request.status.progress : undefined,
      // While Waiting: the few smallest changes that would let it run, or that nothing would.
      unblock: whyOf(request)?.verdict,
    })),
  });
}

export async function listDevicesTool(
  session: McpSession,
  args: Args<typeof ListDevicesInput>,
): Promise<CallToolResult> {
  let workers = await session.client.workers();
  if (args.worker !== undefined) {
    const wanted = args.worker;
    workers = workers.filter((w) => w.metadata.name === wanted || w.spec.label === wanted);
    if (workers.length === 0)
      throw new SimlockError('NOT_FOUND', `worker "${wanted}" not found`, { field: 'worker' });
  }
  workers.sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
  const rows = deviceRows(workers);
  const text =
    rows.length > 0 ? renderTable(deviceColumns(), rows).join('\n') : 'No devices found.';
  return answer(text, { devices: rows.map((row) => ({ worker: row.worker, ...row.device })) });
}

export async function listLeasesTool(
  session: McpSession,
  args: Args<typeof ListLeasesInput>,
): Promise<CallToolResult> {
  const all = args.all === true;
  const own = new Set(session.names());
  // The leases are their requests (ADR 0034); only IDLE is read off the Leases, where allowed.
  const leases = (await session.client.list()).filter(
    (lease) => all || own.has(lease.metadata.name),
  );
  const uses = leases.length > 0 ? await leaseUses(session.client.kube, leases) : new Map();
  const text =
    leases.length > 0
      ? renderTable(leaseColumns(Date.now(), false, leaseUseIn(uses)), leases).join('\n')
      : all
        ? `No leases in ${session.namespace}.`
        : 'This session holds no lease.';
  return answer(text, {
    leases: leases.map((lease) => ({
      name: lease.metadata.name,
      worker: lease.status?.worker,
      phase: lease.status?.phase ?? 'Pending',
      device: lease.status?.device,
      expiresAt: lease.status?.expiresAt,
      own: own.has(lease.metadata.name),
    })),
  });
}
