// `kubectl simlock device list [--worker W]`: the devices the agents report in Worker status.
import { z } from 'zod';
import { SimlockError } from '../../api/index.js';
import { parseFlags, parseGlobals } from '../flags.js';
import { asList, serialise } from '../format/output.js';
import { deviceColumns, deviceRows, renderTable } from '../format/tables.js';
import type { CliIO } from '../io.js';
import { listWorkers } from '../../client/index.js';
import { connect } from '../options.js';

const DeviceListFlags = z.object({
  worker: z.string().min(1).max(253).optional(),
  selector: z.string().max(1024).optional(),
});

export async function deviceList(argv: Record<string, unknown>, io: CliIO): Promise<number> {
  const globals = parseGlobals(argv);
  const flags = parseFlags(DeviceListFlags, argv, {
    worker: '--worker',
    selector: '-l/--selector',
  });
  const { client } = connect(globals);
  let workers = (
    await listWorkers(client, (line) => io.err(`warning: ${line}`), flags.selector)
  ).map((worker) => worker.object);
  if (flags.worker !== undefined) {
    // A worker is named by its name or, as people see it, by its label.
    const wanted = flags.worker;
    workers = workers.filter((w) => w.metadata.name === wanted || w.spec.label === wanted);
    if (workers.length === 0) {
      throw new SimlockError('NOT_FOUND', `worker "${wanted}" not found`, { name: wanted });
    }
  }
  workers.sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
  const rows = deviceRows(workers);
  const text = serialise(
    asList(rows.map((row) => ({ worker: row.worker, ...row.device }))),
    globals.output,
  );
  if (text !== undefined) {
    io.out(text);
    return 0;
  }
  if (globals.output === 'name') {
    for (const row of rows) io.out(`${row.worker}/${row.device.id}`);
    return 0;
  }
  if (rows.length === 0) {
    io.err('No devices found.');
    return 0;
  }
  const lines = renderTable(deviceColumns(), rows, {
    wide: globals.output === 'wide',
    noHeaders: globals.noHeaders,
  });
  for (const line of lines) io.out(line);
  return 0;
}
