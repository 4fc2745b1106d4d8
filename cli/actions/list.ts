// `kubectl simlock list --requests | --leases`.
import { z } from 'zod';
import type { LeaseRequestObject } from '../../api/index.js';
import { parseFlags, parseGlobals, usageError, type GlobalFlags } from '../flags.js';
import { asList, resourceName, serialise, withKind } from '../format/output.js';
import { isListed, requestListLines } from '../format/requests.js';
import { leaseColumns, leaseUseIn, renderTable } from '../format/tables.js';
import type { CliIO } from '../io.js';
import {
  answerWhyOver,
  leaseUses,
  listHeldLeases,
  listRequests,
  readableLeases,
  workersForLabels,
} from '../../client/index.js';
import { connect, type Session } from '../options.js';

const ListFlags = z.object({
  requests: z.boolean().default(false),
  leases: z.boolean().default(false),
});

export async function list(argv: Record<string, unknown>, io: CliIO): Promise<number> {
  const globals = parseGlobals(argv);
  const flags = parseFlags(ListFlags, argv, { requests: '--requests', leases: '--leases' });
  if (flags.requests === flags.leases) {
    throw usageError('--requests/--leases', 'name exactly one of --requests and --leases');
  }
  const session = connect(globals);
  return flags.requests ? listRequestsCommand(session, io) : listLeasesCommand(session, io);
}

const warnTo = (io: CliIO) => (line: string) => io.err(`warning: ${line}`);

function nothingFound(io: CliIO, what: string, session: Session): void {
  io.err(
    session.listNamespace === undefined
      ? `No ${what} found.`
      : `No ${what} found in ${session.listNamespace} namespace.`,
  );
}

/** -o json / yaml / name; answers false for the human formats. */
function printed(
  io: CliIO,
  globals: GlobalFlags,
  resource: 'leaseRequest',
  items: readonly { raw: Record<string, unknown>; name: string }[],
): boolean {
  const text = serialise(asList(items.map((item) => withKind(resource, item.raw))), globals.output);
  if (text !== undefined) {
    io.out(text);
    return true;
  }
  if (globals.output === 'name') {
    for (const item of items) io.out(resourceName(resource, item.name));
    return true;
  }
  return false;
}

async function listRequestsCommand(session: Session, io: CliIO): Promise<number> {
  const { client, globals } = session;
  const warn = warnTo(io);
  // A granted request whose device is recovering is listed too, recovering (-o json: its
  // status.recovery).
  const requests = (await listRequests(client, session.listNamespace, warn)).filter((request) =>
    isListed(request.object),
  );
  const items = requests.map((request) => ({
    raw: request.raw,
    name: request.object.metadata.name,
  }));
  if (printed(io, globals, 'leaseRequest', items)) return 0;
  // Workers name the reasons' workers by label, and hold the agents' own queues.
  const workers = await workersForLabels(client, warn);
  const now = io.now();
  // -o wide: under each waiting request, what would unblock it (ADR 0026), from one read of the
  // leases held (their requests) shared by all of them.
  let extra: ((request: LeaseRequestObject) => string[]) | undefined;
  if (globals.output === 'wide') {
    const leases = await readableLeases(client, session.namespace, warn);
    extra = (request) =>
      request.status?.phase === 'Waiting'
        ? answerWhyOver(request, workers, leases, now).lines.map((line) => `  unblock: ${line}`)
        : [];
  }
  const lines = requestListLines(
    requests.map((request) => request.object),
    workers,
    { now, withNamespace: session.listNamespace === undefined, extra },
  );
  if (lines.length === 0) nothingFound(io, 'waiting requests', session);
  for (const line of lines) io.out(line);
  return 0;
}

/**
 * The leases, as their requests say them (ADR 0034: a Lease lives in its worker's namespace, where
 * its holder need not read). -o json, yaml and name print those LeaseRequests. IDLE alone is read
 * off the Leases (the proxy's exec record is only there), where the caller may: else `<none>`.
 */
async function listLeasesCommand(session: Session, io: CliIO): Promise<number> {
  const { client, globals } = session;
  const leases = await listHeldLeases(client, session.listNamespace, warnTo(io));
  const items = leases.map((lease) => ({ raw: lease.raw, name: lease.object.metadata.name }));
  if (printed(io, globals, 'leaseRequest', items)) return 0;
  if (leases.length === 0) {
    nothingFound(io, 'leases', session);
    return 0;
  }
  const requests = leases.map((lease) => lease.object);
  const uses = await leaseUses(client, requests);
  const lines = renderTable(
    leaseColumns(io.now(), session.listNamespace === undefined, leaseUseIn(uses)),
    requests,
    { wide: globals.output === 'wide', noHeaders: globals.noHeaders },
  );
  for (const line of lines) io.out(line);
  return 0;
}
