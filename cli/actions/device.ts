// `kubectl simlock device list [--worker W]`: the devices the agents report in Worker status.
// `kubectl simlock device unquarantine <worker> <device-id>`: an operator puts a quarantined device
// back in service (an entry in the Worker's spec.unquarantine, which its agent acts on).
import { z } from 'zod';
import { SimlockError } from '../../api/index.js';
import { requestUnquarantine } from '../../runtime/index.js';
import { objectName, parseFlags, parseGlobals, rejectOutput } from '../flags.js';
import { asList, resourceName, serialise } from '../format/output.js';
import { deviceColumns, deviceRows, quarantined, renderTable } from '../format/tables.js';
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

const UnquarantineFlags = z.object({
  worker: objectName,
  deviceId: z.string().min(1).max(128),
});

export async function deviceUnquarantine(
  argv: Record<string, unknown>,
  io: CliIO,
): Promise<number> {
  const globals = parseGlobals(argv);
  rejectOutput(globals, ['json', 'yaml'], 'device unquarantine');
  const flags = parseFlags(UnquarantineFlags, argv, {
    worker: '<worker>',
    deviceId: '<device-id>',
  });
  const { client } = connect(globals);
  const now = io.now();
  const done = await requestUnquarantine(client, flags.worker, flags.deviceId, new Date(now));
  const text = serialise(done, globals.output);
  if (text !== undefined) {
    io.out(text);
    return 0;
  }
  io.out(
    `${resourceName('worker', done.worker)}: device ${done.device} unquarantined (was quarantined ${quarantined(done.quarantine, now)}); its agent puts it back in service`,
  );
  return 0;
}
