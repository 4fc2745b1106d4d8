// `npm pack` gives a tarball from which another TypeScript project imports `simlock/client`: it
// installs (its dependencies from the npm registry), typechecks against the shipped declarations
// (a wrong platform is a type error), and runs against the real API server.
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useCluster } from '../test/cluster/harness.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
const cluster = useCluster('package');
let project: string;

const tsconfig = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    skipLibCheck: true,
    outDir: 'out',
    types: ['node'],
  },
  include: ['main.ts'],
};

const main = `import { SimlockClient, SimlockError, type WorkerObject } from 'simlock/client';

const [kubeconfig, namespace] = process.argv.slice(2);
const client = SimlockClient.connect({ kubeconfig, namespace });
const workers: WorkerObject[] = await client.workers();
const leases = await client.list();
let code: string | undefined;
try {
  await client.lease({ platform: 'ios', waitTimeoutSeconds: -1 });
} catch (error) {
  if (error instanceof SimlockError) code = \`\${error.code} \${error.details?.field ?? ''}\`;
}
console.log(JSON.stringify({ workers: Array.isArray(workers), leases: leases.length, code }));
`;

const wrong = `import { SimlockClient } from 'simlock/client';
await SimlockClient.connect().lease({ platform: 'windows' });
`;

let packed = '';

beforeAll(async () => {
  packed = await mkdtemp(join(tmpdir(), 'simlock-pack-'));
  await run('npm', ['pack', '--pack-destination', packed], { cwd: root });
  const [tarball] = (await readdir(packed)).filter((file) => file.endsWith('.tgz'));
  project = await mkdtemp(join(tmpdir(), 'simlock-consumer-'));
  await writeFile(
    join(project, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
  );
  await writeFile(join(project, 'tsconfig.json'), JSON.stringify(tsconfig));
  await writeFile(join(project, 'main.ts'), main);
  await writeFile(join(project, 'wrong.ts'), wrong);
  await run(
    'npm',
    [
      ...['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'],
      ...[join(packed, tarball ?? ''), 'typescript@5.9.3', '@types/node@20.19.43'],
    ],
    { cwd: project },
  );
}, 300_000);

// The tarball and the consumer's node_modules (about 150 MB) are not left in /tmp.
afterAll(async () => {
  for (const folder of [packed, project])
    if (folder) await rm(folder, { recursive: true, force: true });
});

describe('the npm package', () => {
  it('typechecks a project that imports simlock/client, and a wrong platform does not', async () => {
    await run('npx', ['tsc', '-p', '.'], { cwd: project });
    const wrongCheck = await run(
      'npx',
      [
        ...['tsc', '--noEmit', '--strict', '--skipLibCheck', '--types', 'node'],
        ...['--module', 'nodenext', '--target', 'es2022', 'wrong.ts'],
      ],
      { cwd: project },
    ).then(
      () => '',
      (error: { stdout: string }) => error.stdout,
    );
    expect(wrongCheck).toMatch(/wrong\.ts.*Type '"windows"' is not assignable/s);
  }, 120_000);

  it('runs against the API server', async () => {
    const { stdout } = await run(
      'node',
      ['out/main.js', cluster.kubeconfigPath, cluster.namespace],
      { cwd: project },
    );
    expect(JSON.parse(stdout)).toEqual({
      workers: true,
      leases: 0,
      code: 'USAGE waitTimeoutSeconds',
    });
  }, 60_000);
});
