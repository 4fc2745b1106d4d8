// The agent's choice of Lease selector against the real API server: the field selector on the
// Lease CRD as generated, and the label, with one warning, where a Lease CRD does not declare
// spec.worker selectable. The shared Lease CRD is never changed (other files run beside this one):
// the older CRD is a copy of it without selectableFields, in a group of this file's own.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { createLogger, simlockPath, systemClock } from '../../runtime/index.js';
import { eventually, useCluster } from '../../test/cluster/harness.js';
import { chooseLeaseSelector } from './lease-selector.js';

const cluster = useCluster('lease-selector');

const GeneratedCrd = z.looseObject({
  spec: z.looseObject({
    group: z.string(),
    versions: z.array(z.looseObject({ name: z.string() })),
  }),
});

/** A logger that keeps its lines, to count the warnings. */
function recordingLogger(): { log: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  return { log: createLogger({}, 'info', (line) => lines.push(line)), lines };
}

const olderGroup = `${cluster.namespace}.older.simlock.dev`;
const olderCrdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/leases.${olderGroup}`;
afterAll(async () => {
  await cluster.admin.delete(olderCrdPath).catch(() => undefined);
});

/** The generated Lease CRD as an older release shipped it: no selectableFields. */
async function applyOlderLeaseCrd(): Promise<string> {
  const generated = GeneratedCrd.parse(
    parse(
      await readFile(
        fileURLToPath(new URL('../../crds/simlock.dev_leases.yaml', import.meta.url)),
        'utf8',
      ),
    ),
  );
  const version = generated.spec.versions[0]?.name ?? 'v1alpha1';
  await cluster.admin.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    ...generated,
    metadata: { name: `leases.${olderGroup}` },
    spec: {
      ...generated.spec,
      group: olderGroup,
      versions: generated.spec.versions.map(({ selectableFields: _, ...rest }) => rest),
    },
  });
  const path = `/apis/${olderGroup}/${version}/namespaces/${cluster.namespace}/leases`;
  // Served once the CRD is established: a list answers (without a field selector).
  await eventually(() => cluster.admin.get(path), { what: 'the older Lease CRD served' });
  return path;
}

describe('the Lease selector an agent chooses', () => {
  it('is the field spec.worker on the Lease CRD as generated, without a warning', async () => {
    const { log, lines } = recordingLogger();
    const selector = await chooseLeaseSelector({
      client: cluster.admin,
      path: simlockPath('lease'),
      worker: 'mac-1',
      clock: systemClock(),
      log,
    });
    expect(selector).toEqual({ fieldSelector: 'spec.worker=mac-1' });
    expect(lines).toEqual([]);
  });

  it('is the worker label on a Lease CRD without selectableFields, warned once with the fix', async () => {
    const path = await applyOlderLeaseCrd();
    const { log, lines } = recordingLogger();
    const selector = await chooseLeaseSelector({
      client: cluster.admin,
      path,
      worker: 'mac-1',
      clock: systemClock(),
      log,
    });
    expect(selector).toEqual({ labelSelector: 'simlock.dev/worker=mac-1' });
    expect(lines).toHaveLength(1);
    const warning = z
      .object({ level: z.string(), field: z.string(), fix: z.string(), error: z.unknown() })
      .parse(JSON.parse(lines[0] ?? ''));
    expect(warning).toMatchObject({ level: 'warn', field: 'spec.worker' });
    expect(warning.fix).toContain("chart's CRDs");
    // What the API server said, as the agent recognised it.
    expect(JSON.stringify(warning.error)).toContain('field label not supported: spec.worker');
  });
});
