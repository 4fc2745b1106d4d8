// A running agent says so in <dataDir>/agent.pid: `simlock-agent doctor --fix` refuses to repair
// under it (exit 2), a report still runs, and a SIGTERM'd agent removes the file as it stops.
import { access, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { useCluster } from '../test/cluster/harness.js';
import { iosSimulatorScript, startAgent } from '../test/cluster/agents.js';
import { doctorCommand } from './doctor-command.js';

const cluster = useCluster('pid');
const folders: string[] = [];
afterAll(async () => {
  for (const folder of folders) await rm(folder, { recursive: true, force: true });
});

describe('agent.pid', { timeout: 90_000 }, () => {
  it('names the running agent, makes doctor --fix refuse, and goes when the agent stops', async () => {
    const root = await mkdtemp(join(tmpdir(), 'simlock-agent-pid-'));
    folders.push(root);
    const dataDir = join(root, 'data');
    const agent = await startAgent({
      admin: cluster.admin,
      kubeconfigPath: cluster.kubeconfigPath,
      name: `${cluster.namespace}-a`,
      namespace: cluster.namespace,
      fleet: cluster.namespace,
      script: iosSimulatorScript(),
      config: { dataDir },
    });
    const pidFile = join(dataDir, 'agent.pid');
    expect((await readFile(pidFile, 'utf8')).trim()).toBe(String(agent.child.pid));

    const configPath = join(root, 'doctor.yaml');
    await writeFile(
      configPath,
      stringify({ name: 'doctor', drivers: ['fake'], fakeScript: agent.scriptPath, dataDir }),
    );
    let out = '';
    let err = '';
    const io = { out: (text: string) => (out += text), err: (text: string) => (err += text) };
    expect(await doctorCommand(['--config', configPath, '--fix'], io)).toBe(2);
    expect(err).toContain(`an agent runs on ${dataDir} (pid ${agent.child.pid})`);
    expect(await doctorCommand(['--config', configPath], io)).toBe(0);
    expect(out).toContain(`An agent runs on this data directory (pid ${agent.child.pid}).`);

    await agent.kill('SIGTERM');
    await expect(access(pidFile)).rejects.toThrow(/ENOENT/);
  });
});
