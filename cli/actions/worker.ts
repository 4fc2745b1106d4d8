// `kubectl simlock worker list | drain <worker> | undrain <worker>`.
import { z } from 'zod';
import { SimlockError, WorkerObject } from '../../api/index.js';
import { isNotFound, simlockPath, type KubeClient } from '../../runtime/index.js';
import { objectName, parseFlags, parseGlobals, rejectOutput } from '../flags.js';
import { asList, resourceName, serialise, withKind } from '../format/output.js';
import { connection, renderTable, workerColumns, type Connection } from '../format/tables.js';
import type { CliIO } from '../io.js';
import { heartbeats, listWorkers, parseAnswer } from '../../client/index.js';
import { connect } from '../options.js';

const SelectorFlags = z.object({ selector: z.string().max(1024).optional() });

export async function workerList(argv: Record<string, unknown>, io: CliIO): Promise<number> {
  const globals = parseGlobals(argv);
  const flags = parseFlags(SelectorFlags, argv, { selector: '-l/--selector' });
  const { client } = connect(globals);
  const warn = (line: string) => io.err(`warning: ${line}`);
  const workers = (await listWorkers(client, warn, flags.selector)).sort((a, b) =>
    a.object.metadata.name < b.object.metadata.name ? -1 : 1,
  );
  const text = serialise(
    asList(workers.map((worker) => withKind('worker', worker.raw))),
    globals.output,
  );
  if (text !== undefined) {
    io.out(text);
    return 0;
  }
  if (globals.output === 'name') {
    for (const worker of workers) io.out(resourceName('worker', worker.object.metadata.name));
    return 0;
  }
  if (workers.length === 0) {
    io.err('No workers found.');
    return 0;
  }
  const now = io.now();
  const beats = await heartbeats(
    client,
    globals.simlockNamespace,
    workers.map((worker) => worker.object.metadata.name),
    warn,
  );
  const connected = (name: string): Connection =>
    beats === undefined ? 'unknown' : connection(beats.get(name), now);
  const lines = renderTable(
    workerColumns(now, connected),
    workers.map((worker) => worker.object),
    { wide: globals.output === 'wide', noHeaders: globals.noHeaders },
  );
  for (const line of lines) io.out(line);
  return 0;
}

export function workerDrain(argv: Record<string, unknown>, io: CliIO): Promise<number> {
  return setDrained(argv, io, true);
}

export function workerUndrain(argv: Record<string, unknown>, io: CliIO): Promise<number> {
  return setDrained(argv, io, false);
}

async function setDrained(
  argv: Record<string, unknown>,
  io: CliIO,
  drained: boolean,
): Promise<number> {
  const globals = parseGlobals(argv);
  rejectOutput(globals, ['name', 'wide'], drained ? 'worker drain' : 'worker undrain');
  const flags = parseFlags(z.object({ worker: objectName }), argv, { worker: '<worker>' });
  const { client } = connect(globals);
  const name = await patchDrained(client, flags.worker, drained);
  io.out(`${resourceName('worker', name)} ${drained ? 'drained' : 'undrained'}`);
  return 0;
}

/** Merge-patches spec.drained; answers the worker's name. */
async function patchDrained(client: KubeClient, name: string, drained: boolean): Promise<string> {
  try {
    const answer = await client.patch(simlockPath('worker', { name }), { spec: { drained } });
    return parseAnswer(WorkerObject, answer, 'worker').object.metadata.name;
  } catch (error) {
    if (isNotFound(error)) {
      throw new SimlockError('NOT_FOUND', `worker "${name}" not found`, { name });
    }
    throw error;
  }
}
