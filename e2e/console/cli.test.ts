// `kubectl simlock console --no-open`: the plugin starts the console on 127.0.0.1 with the
// kubeconfig's credentials, prints a URL whose key admits a browser, and stops on Ctrl-C.
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { useCluster } from '../../test/cluster/harness.js';
import { plugin } from '../acceptance/fleet.js';

const cluster = useCluster('console-cli');

describe('kubectl simlock console', () => {
  it('prints a URL that admits the browser with its key, and nothing without it', async () => {
    const child = spawn(plugin, ['--kubeconfig', cluster.kubeconfigPath, 'console', '--no-open'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).once('line', resolve);
        child.once('exit', (code) => reject(new Error(`the console exited with ${code}`)));
      });
      const url = /^simlock console: (http:\/\/127\.0\.0\.1:\d+)\/login\?key=\S+$/.exec(line);
      expect(url, line).not.toBeNull();
      const base = url?.[1] ?? '';
      expect((await fetch(`${base}/api/session`)).status).toBe(401);
      expect((await fetch(`${base}/login?key=wrong`, { redirect: 'manual' })).status).toBe(401);
      const login = await fetch(line.slice('simlock console: '.length), { redirect: 'manual' });
      expect(login.status).toBe(303);
      const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
      const session = await fetch(`${base}/api/session`, { headers: { cookie } });
      expect(session.status).toBe(200);
      expect(((await session.json()) as { mode: string }).mode).toBe('local');
      const page = await fetch(`${base}/fleet`, { headers: { cookie } });
      expect(await page.text()).toContain('<div id="root">');
      // A page of another site, reaching the port by another name, is not answered.
      const rebound = await new Promise<number>((resolve, reject) => {
        const call = request(`${base}/api/session`, {
          headers: { cookie, host: 'evil.example:80' },
        });
        call.on('response', (response) => resolve(response.statusCode ?? 0)).on('error', reject);
        call.end();
      });
      expect(rebound).toBe(421);
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGINT');
      await exited;
    }
  });
});
