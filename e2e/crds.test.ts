// The CRDs as the API server serves them: printer columns, categories, explain, and validation the
// API server itself enforces, each refusal naming the field.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { simlockPath } from '../runtime/index.js';
import { KubeApiError } from '../runtime/index.js';
import { useCluster } from '../test/cluster/harness.js';
import { aLease, aLeaseRequest } from '../test/fixtures/objects.js';
import { physicalIphone } from '../test/fixtures/workers.js';

const cluster = useCluster('crds');

const ManagedFields = z.object({
  metadata: z.object({
    managedFields: z.array(
      z.object({
        subresource: z.string().optional(),
        fieldsV1: z.object({ 'f:status': z.record(z.string(), z.unknown()).optional() }),
      }),
    ),
  }),
});

function leaseRequest(name: string, spec: Record<string, unknown>) {
  return aLeaseRequest(name).specAsGiven(spec).obj();
}

/** Creates an iOS request named `name`; answers the path of its status subresource. */
async function statusPathOfNew(name: string): Promise<string> {
  await cluster.admin.create(
    simlockPath('leaseRequest', { namespace: cluster.namespace }),
    leaseRequest(name, { platform: 'ios' }),
  );
  return simlockPath('leaseRequest', { namespace: cluster.namespace, name, subresource: 'status' });
}

async function refusal(name: string, spec: Record<string, unknown>): Promise<string> {
  try {
    await cluster.admin.create(
      simlockPath('leaseRequest', { namespace: cluster.namespace }),
      leaseRequest(name, spec),
    );
  } catch (error) {
    if (error instanceof KubeApiError) return error.message;
    throw error;
  }
  throw new Error(`the API server accepted ${JSON.stringify(spec)}`);
}

describe('LeaseRequest as served by the API server', () => {
  it('lists with its printer columns in kubectl get leaserequests and kubectl get simlock', async () => {
    await cluster.admin.create(
      simlockPath('leaseRequest', { namespace: cluster.namespace }),
      leaseRequest('columns', { platform: 'ios', model: 'iPhone 16' }),
    );
    const byName = await cluster.kubectl(['get', 'leaserequests', '-n', cluster.namespace]);
    expect(byName.exitCode).toBe(0);
    expect(byName.stdout.split('\n')[0]).toMatch(
      /^NAME\s+PHASE\s+PLATFORM\s+MODEL\s+DEVICE\s+WORKER\s+REASONS\s+AGE$/,
    );
    expect(byName.stdout).toMatch(/columns\s+ios\s+iPhone 16/);

    const byCategory = await cluster.kubectl(['get', 'simlock', '-A']);
    expect(byCategory.exitCode).toBe(0);
    expect(byCategory.stdout).toContain('leaserequest.simlock.dev/columns');

    const byShortName = await cluster.kubectl(['get', 'lr', '-n', cluster.namespace, '-o', 'wide']);
    expect(byShortName.stdout.split('\n')[0]).toMatch(/ERROR\s+POSITION\s+HOLDER\s+EXPIRES/);
  });

  it('fills defaults for the wait timeout and the duration', async () => {
    const created = (await cluster.admin.create(
      simlockPath('leaseRequest', { namespace: cluster.namespace }),
      leaseRequest('defaults', { platform: 'android' }),
    )) as { spec: Record<string, unknown> };
    expect(created.spec).toMatchObject({ waitTimeoutSeconds: 300, durationSeconds: 3600 });
  });

  it('is explained field by field by kubectl explain', async () => {
    const explained = await cluster.kubectl(['explain', 'leaserequest.spec']);
    expect(explained.exitCode).toBe(0);
    expect(explained.stdout).toContain('platform');
    expect(explained.stdout).toMatch(/os\s+<string>/);
    expect(explained.stdout).toContain('An exact OS version');
  });

  it.each([
    [
      'an unknown platform',
      { platform: 'windows' },
      /spec\.platform.*Unsupported value: "windows"/,
    ],
    ['an OS that is not a version', { platform: 'ios', os: 'banana' }, /spec\.os.*should match/],
    [
      'a negative duration',
      { platform: 'ios', durationSeconds: -5 },
      /spec\.durationSeconds.*should be greater than or equal to 1/,
    ],
    ['a missing platform', {}, /spec\.platform.*Required value/],
    [
      'a zero renewal interval',
      { platform: 'ios', holderSession: 'session-1', holderRenewSeconds: 0 },
      /spec\.holderRenewSeconds.*should be greater than or equal to 1/,
    ],
    [
      'a negative idle timeout',
      { platform: 'ios', idleTimeoutSeconds: -1 },
      /spec\.idleTimeoutSeconds.*should be greater than or equal to 1/,
    ],
    [
      'a zero idle timeout',
      { platform: 'ios', idleTimeoutSeconds: 0 },
      /spec\.idleTimeoutSeconds.*should be greater than or equal to 1/,
    ],
    [
      'an idle timeout longer than the duration',
      { platform: 'ios', durationSeconds: 60, idleTimeoutSeconds: 120 },
      /spec\.idleTimeoutSeconds: Invalid value.*must not be longer than spec\.durationSeconds/,
    ],
    [
      'a renewal interval without a session',
      { platform: 'ios', holderRenewSeconds: 5 },
      /spec\.holderRenewSeconds: Invalid value.*go together/,
    ],
  ])('refuses %s, naming the field', async (_case, spec, message) => {
    expect(await refusal(`bad-${Math.random().toString(36).slice(2, 8)}`, spec)).toMatch(message);
  });

  it('refuses a change to the spec after creation', async () => {
    const path = simlockPath('leaseRequest', { namespace: cluster.namespace, name: 'frozen' });
    await cluster.admin.create(
      simlockPath('leaseRequest', { namespace: cluster.namespace }),
      leaseRequest('frozen', { platform: 'ios' }),
    );
    const change = cluster.admin.patch(path, { spec: { model: 'iPhone 16' } });
    await expect(change).rejects.toThrow(/spec: Invalid value.*spec is immutable after creation/);
    const added = cluster.admin.patch(path, { spec: { idleTimeoutSeconds: 60 } });
    await expect(added).rejects.toThrow(/spec is immutable after creation/);
  });

  it('lets spec.durationSeconds grow (extend), and refuses a decrease naming the field', async () => {
    const path = simlockPath('leaseRequest', { namespace: cluster.namespace, name: 'extended' });
    await cluster.admin.create(
      simlockPath('leaseRequest', { namespace: cluster.namespace }),
      leaseRequest('extended', { platform: 'ios', durationSeconds: 600 }),
    );
    const grown = (await cluster.admin.patch(path, { spec: { durationSeconds: 900 } })) as {
      spec: { durationSeconds: number };
    };
    expect(grown.spec.durationSeconds).toBe(900);
    await expect(cluster.admin.patch(path, { spec: { durationSeconds: 300 } })).rejects.toThrow(
      /spec\.durationSeconds: Invalid value.*may only grow/,
    );
  });

  it('takes reasons grouped or one worker an item, and refuses an item naming both or neither', async () => {
    const name = 'status-items';
    const statusPath = await statusPathOfNew(name);
    const oneOf = /exactly one of worker and names/;
    const write = (workers: unknown[]) =>
      cluster.admin.patch(statusPath, { status: { phase: 'Waiting', workers } });
    await expect(write([{ reason: 'busy' }])).rejects.toThrow(oneOf);
    await expect(write([{ worker: 'a', names: ['b'], reason: 'busy' }])).rejects.toThrow(oneOf);
    await expect(write([{ names: [], reason: 'busy' }])).rejects.toThrow(/names/);
    await expect(
      write([{ names: ['a'], reason: 'drained', capacityReason: 'ram-budget' }]),
    ).rejects.toThrow(/capacityReason is allowed only with reason full/);
    const mixed = [
      { reason: 'full', capacityReason: 'ram-budget', names: ['a', 'c'] },
      { worker: 'b', reason: 'busy' },
    ];
    const stored = (await write(mixed)) as { status: { workers: unknown } };
    expect(stored.status.workers).toEqual(mixed);
  });

  it('refuses a capacity reason on anything but full', async () => {
    const name = 'status-rules';
    const statusPath = await statusPathOfNew(name);
    await expect(
      cluster.admin.patch(statusPath, {
        status: {
          phase: 'Waiting',
          workers: [{ worker: 'a', reason: 'drained', capacityReason: 'ram-budget' }],
        },
      }),
    ).rejects.toThrow(/capacityReason is allowed only with reason full/);
    await cluster.admin.patch(statusPath, {
      status: {
        phase: 'Waiting',
        workers: [{ worker: 'a', reason: 'full', capacityReason: 'ram-budget' }],
      },
    });
  });

  it('keeps status.workers as one field in managed fields, not one per worker (ADR 0017)', async () => {
    const name = 'status-workers-atomic';
    await cluster.admin.create(
      simlockPath('leaseRequest', { namespace: cluster.namespace }),
      leaseRequest(name, { platform: 'ios' }),
    );
    const path = simlockPath('leaseRequest', { namespace: cluster.namespace, name });
    const workers = Array.from({ length: 50 }, (_, index) => ({
      worker: `mac-${String(index).padStart(2, '0')}`,
      reason: 'busy',
    }));
    await cluster.admin.replace(`${path}/status`, {
      ...((await cluster.admin.get(path)) as object),
      status: { phase: 'Waiting', workers },
    });
    const stored = ManagedFields.parse(await cluster.admin.get(path));
    const statusEntry = stored.metadata.managedFields.find(
      (entry) => entry.subresource === 'status',
    );
    expect(statusEntry?.fieldsV1['f:status']?.['f:workers']).toEqual({});
    // One worker's entry would add ~60 bytes to the object with each write (50 here: 3 KB).
    expect(JSON.stringify(statusEntry)).not.toContain('mac-00');
  });
});

describe('Worker and Lease as served by the API server', () => {
  it('shows workers cluster-wide by short name, with label, health and slots', async () => {
    const name = `wk-${cluster.namespace}`;
    await cluster.admin.create(simlockPath('worker'), {
      apiVersion: 'simlock.dev/v1alpha1',
      kind: 'Worker',
      metadata: { name },
      spec: { label: 'mac-mini-1' },
    });
    await cluster.admin.patch(simlockPath('worker', { name, subresource: 'status' }), {
      status: {
        protocol: 1,
        agentVersion: '0.1.0',
        health: 'running',
        slots: '1/2',
        deviceCount: 3,
      },
    });
    const listed = await cluster.kubectl(['get', 'wk', name]);
    expect(listed.stdout.split('\n')[0]).toMatch(
      /^NAME\s+LABEL\s+DRAINED\s+HEALTH\s+RUNNING\s+DEVICES\s+AGE$/,
    );
    expect(listed.stdout).toMatch(
      new RegExp(`${name}\\s+mac-mini-1\\s+false\\s+running\\s+1/2\\s+3`),
    );
    await cluster.admin.delete(simlockPath('worker', { name }));
  });

  it('refuses a presence reason on a present device', async () => {
    const name = `wk2-${cluster.namespace}`;
    await cluster.admin.create(simlockPath('worker'), {
      apiVersion: 'simlock.dev/v1alpha1',
      kind: 'Worker',
      metadata: { name },
      spec: {},
    });
    // Present, and yet a reason: the schema refuses the pair (Device's type lets it through).
    const device = physicalIphone({ presence: { present: true, reason: 'locked' } });
    await expect(
      cluster.admin.patch(simlockPath('worker', { name, subresource: 'status' }), {
        status: { protocol: 1, agentVersion: '0.1.0', health: 'running', devices: [device] },
      }),
    ).rejects.toThrow(/presence.reason is required when not present, and not allowed when present/);
    await cluster.admin.delete(simlockPath('worker', { name }));
  });

  it('lists leases.simlock.dev with request, worker, device, phase and expiry', async () => {
    await cluster.admin.create(
      simlockPath('lease', { namespace: cluster.namespace }),
      aLease('one')
        .forRequest('team-a', 'ci-1')
        .worker('worker-a')
        .expiresAt('2030-01-01T00:00:00Z')
        .obj(),
    );
    const listed = await cluster.kubectl(['get', 'dl', '-n', cluster.namespace]);
    expect(listed.stdout.split('\n')[0]).toMatch(
      /^NAME\s+REQUEST\s+WORKER\s+DEVICE\s+PHASE\s+EXPIRES\s+IDLE\s+AGE$/,
    );
    expect(listed.stdout).toMatch(/one\s+ci-1\s+worker-a/);
  });
});
