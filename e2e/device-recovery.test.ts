// A held lease whose device crashes and is booted again under it, as its holder hears of it: the
// controller in-process, the test playing the agent (it writes the Lease's recovery, then its
// end, as docs/AGENT.md says the agent does), and the plugin as a process: `lease --hold` prints a
// line when the device crashes and when it is back, the typed client calls onRecovery, the MCP
// server sends the session a logging notification, and `list` shows the lease recovering.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  LoggingMessageNotificationSchema,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { SimlockClient, type DeviceRecoveryNotice } from '../client/index.js';
import type { Reconciler } from '../controller/index.js';
import { simlockPath } from '../runtime/index.js';
import { makeRecoveryWrites } from '../test/fixtures/device-recovery.js';
import { controllerFor } from '../test/cluster/controller.js';
import { TestFleet, iosStatus } from '../test/cluster/fleet.js';
import { pathOfLease } from '../test/cluster/leases.js';
import { eventually, runCommand, useCluster } from '../test/cluster/harness.js';

const cluster = useCluster('recovery-holder');
const plugin = join(fileURLToPath(new URL('../bin/', import.meta.url)), 'kubectl-simlock');
const running: Reconciler[] = [];
const fleets: TestFleet[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((reconciler) => reconciler.stop()));
  await Promise.all(fleets.splice(0).map((fleet) => fleet.cleanup()));
});

async function setup(): Promise<TestFleet> {
  const fleet = await TestFleet.create(cluster);
  fleets.push(fleet);
  const reconciler = controllerFor(cluster, fleet);
  running.push(reconciler);
  await reconciler.start();
  await fleet.addWorker('a', { label: 'wrk_a', status: iosStatus() });
  return fleet;
}

const { recovery, crashed, back } = makeRecoveryWrites(new Date().toISOString());
const crashLine =
  'device iPhone 16 (sim-1) crashed (shut down): booting it again, back in about 40 s';
const backLine = 'device iPhone 16 (sim-1) is back after its crash (shut down)';

/** The agent's part: its Lease's recovery, then its end (a merge patch: null takes it off). */
async function crashAndRecover(fleet: TestFleet, name: string, seen: () => Promise<unknown>) {
  await patchLease(fleet, name, { recovery, conditions: [crashed] });
  await seen();
  await patchLease(fleet, name, { recovery: null, conditions: [back] });
}

async function patchLease(fleet: TestFleet, name: string, status: Record<string, unknown>) {
  const lease = await fleet.lease(name);
  if (!lease) throw new Error(`no Lease of ${name}`);
  await fleet.admin.patch(pathOfLease(lease, 'status'), { status });
}

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function simlock(fleet: TestFleet, ...args: string[]) {
  return runCommand(plugin, [
    ...args,
    '--kubeconfig',
    cluster.kubeconfigPath,
    '-n',
    fleet.namespace,
  ]);
}

/** The only request in the fleet's namespace, once there is one (named by the API server). */
async function onlyRequest(fleet: TestFleet): Promise<string> {
  return eventually(
    async () => {
      const list = (await fleet.admin.get(
        simlockPath('leaseRequest', { namespace: fleet.namespace }),
      )) as { items: { metadata: { name: string } }[] };
      return list.items[0]?.metadata.name;
    },
    { what: 'a request' },
  );
}

describe("a held lease's device recovery", () => {
  it('lease --hold prints a line when the device crashes and when it is back; list shows it recovering', async () => {
    const fleet = await setup();
    const child = spawn(plugin, [
      ...['lease', '--platform', 'ios', '--device', 'iPhone 16', '--name', 'held', '--hold'],
      // The default renewal (10 s): a 2 s session lapses when a loaded machine delays renewals
      // for two seconds, and the controller then releases the lease (HolderGone) mid-story.
      ...['--kubeconfig', cluster.kubeconfigPath, '-n', fleet.namespace],
    ]);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const printed = (text: string) =>
      eventually(() => (stderr.includes(text) ? true : undefined), {
        what: `"${text}" on stderr (so far: ${stderr})`,
      });
    try {
      await fleet.grant('held');
      await printed('Holding lease held');
      await crashAndRecover(fleet, 'held', async () => {
        await printed(`lease held: ${crashLine}`);
        // While it lasts, list shows the lease recovering, and -o json carries the recovery.
        const requests = await simlock(fleet, 'list', '--requests');
        expect(requests.stdout).toMatch(
          new RegExp(
            `^Request held: ios iPhone 16, recovering on wrk_a for \\d+s: ${escaped(crashLine)}$`,
            'm',
          ),
        );
        const json = await simlock(fleet, 'list', '--requests', '-o', 'json');
        const items = (JSON.parse(json.stdout) as { items: { status: { recovery?: unknown } }[] })
          .items;
        expect(items.map((item) => item.status.recovery)).toEqual([recovery]);
        const leases = await simlock(fleet, 'list', '--leases');
        expect(leases.stdout).toMatch(/^held\s+\S+\s+iPhone 16\s+Recovering\s+in /m);
      });
      await printed(`lease held: ${backLine}`);
      expect((await simlock(fleet, 'list', '--requests')).stdout).not.toMatch(/^Request held/m);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(143);
    // One line each: the plugin polls the request, and says each change once.
    expect(stderr.split(crashLine)).toHaveLength(2);
    expect(stderr.split(backLine)).toHaveLength(2);
  }, 40_000);

  it('the typed client calls onRecovery when the device crashes and when it is back', async () => {
    const fleet = await setup();
    const client = SimlockClient.connect({
      kubeconfig: cluster.kubeconfigPath,
      namespace: fleet.namespace,
    });
    const notices: DeviceRecoveryNotice[] = [];
    const leasing = client.lease(
      { platform: 'ios', model: 'iPhone 16' },
      { name: 'typed', hold: true, onRecovery: (notice) => notices.push(notice) },
    );
    await fleet.grant('typed');
    const handle = await leasing;
    try {
      const told = (count: number) =>
        eventually(() => (notices.length >= count ? true : undefined), {
          what: `${count} notices`,
        });
      await crashAndRecover(fleet, 'typed', () => told(1));
      await told(2);
      expect(notices).toEqual([
        expect.objectContaining({
          kind: 'recovering',
          reason: 'DeviceRecovering',
          lease: 'typed',
          recovery,
          text: crashLine,
        }),
        expect.objectContaining({ kind: 'recovered', reason: 'DeviceRecovered', text: backLine }),
      ]);
    } finally {
      await handle.release({ wait: false });
    }
  });

  it('the MCP server sends the session holding the lease a notification each way', async () => {
    const fleet = await setup();
    const transport = new StdioClientTransport({
      command: plugin,
      args: [
        // The default renewal, as for lease --hold above.
        ...['mcp', '--kubeconfig', cluster.kubeconfigPath, '-n', fleet.namespace],
      ],
      stderr: 'pipe',
    });
    const client = new Client({ name: 'simlock-e2e', version: '1.0.0' });
    const messages: LoggingMessageNotification['params'][] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      messages.push(notification.params);
    });
    await client.connect(transport);
    try {
      const leasing = client.callTool(
        { name: 'lease', arguments: { platform: 'ios', model: 'iPhone 16' } },
        undefined,
        { timeout: 60_000 },
      );
      const name = await onlyRequest(fleet);
      await fleet.grant(name);
      expect((await leasing).isError).toBeFalsy();
      const told = (count: number) =>
        eventually(() => (messages.length >= count ? true : undefined), {
          what: `${count} notifications`,
        });
      await crashAndRecover(fleet, name, () => told(1));
      await told(2);
      expect(messages).toEqual([
        {
          level: 'warning',
          logger: 'simlock',
          data: { lease: name, event: 'DeviceRecovering', message: crashLine, recovery },
        },
        {
          level: 'info',
          logger: 'simlock',
          data: { lease: name, event: 'DeviceRecovered', message: backLine },
        },
      ]);
    } finally {
      await client.close();
    }
  }, 40_000);
});
