import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentConfigError, loadAgentConfig, normalizeFlags, parseAgentConfig } from './config.js';

describe('the agent config', () => {
  it('fills defaults around the required fields', () => {
    const config = parseAgentConfig({ name: 'mac-mini-1', drivers: ['simctl', 'devicectl'] });
    expect(config).toMatchObject({
      name: 'mac-mini-1',
      namespace: 'simlock-system',
      drivers: ['simctl', 'devicectl'],
      reclaim: 'erase-keep-warm',
      probeIntervalMs: 10_000,
      heartbeat: { durationSeconds: 40, renewEverySeconds: 10 },
      listen: { host: '0.0.0.0', port: 8780 },
      simctl: { deviceSet: 'own', adopt: [] },
      adb: { serverPort: 5137, adopt: [] },
      provision: { enabled: true, models: [], os: [] },
    });
    // No limits: the agent derives them from the machine.
    expect(config.limits).toBeUndefined();
  });

  it('lets flags override the file field by field', () => {
    const config = parseAgentConfig(
      {
        name: 'linux-1',
        drivers: ['adb'],
        limits: { running: 2, platforms: { android: { running: 2, ramBudgetMb: 8192 } } },
      },
      {
        'probe-interval-ms': 2000,
        limits: { platforms: { android: { running: 1 } } },
        _: [],
        $0: 'simlock-agent',
      },
    );
    expect(config.probeIntervalMs).toBe(2000);
    expect(config.limits?.platforms.android).toEqual({
      running: 1,
      ramBudgetMb: 8192,
      ramPerDeviceMb: 2048,
    });
    expect(config.limits?.running).toBe(2);
  });

  it('names the field that is wrong', () => {
    expect(() => parseAgentConfig({ name: 'Mac Mini', drivers: ['simctl'] })).toThrow(
      /name: must be lower-case/,
    );
    expect(() => parseAgentConfig({ name: 'a', drivers: ['xcode'] })).toThrow(/drivers\.0/);
    expect(() => parseAgentConfig({ name: 'a', drivers: ['adb'], limits: { runing: 3 } })).toThrow(
      /limits: Unrecognized key: "runing"/,
    );
    expect(() => parseAgentConfig({ name: 'a', drivers: ['adb'], probeIntervalMs: 5 })).toThrow(
      /probeIntervalMs/,
    );
  });

  it('takes the exec proxy a host behind NAT connects out to, as an http(s) or ws(s) URL', () => {
    const config = parseAgentConfig({
      name: 'a',
      drivers: ['adb'],
      tunnel: { url: 'https://simlock-proxy.example.com' },
    });
    expect(config.tunnel?.url).toBe('https://simlock-proxy.example.com');
    expect(config.endpoint).toBeUndefined();
    expect(() =>
      parseAgentConfig({ name: 'a', drivers: ['adb'], tunnel: { url: 'ftp://proxy' } }),
    ).toThrow(/tunnel\.url/);
  });

  it('sends its token over plain http only to loopback, or when told to (a local demo)', () => {
    const tunnel = (url: string, allowPlainHttp?: boolean) =>
      parseAgentConfig({
        name: 'a',
        drivers: ['adb'],
        tunnel: { url, ...(allowPlainHttp !== undefined ? { allowPlainHttp } : {}) },
      }).tunnel;
    expect(() => tunnel('http://simlock-proxy.example.com')).toThrow(
      /tunnel\.url: plain http:\/\/ would send the agent's token unencrypted/,
    );
    expect(() => tunnel('ws://10.0.0.7:8080')).toThrow(/tunnel\.allowPlainHttp/);
    expect(tunnel('http://127.0.0.1:8080')?.url).toBe('http://127.0.0.1:8080');
    expect(tunnel('http://localhost:8080')?.url).toBe('http://localhost:8080');
    expect(tunnel('http://[::1]:8080')?.url).toBe('http://[::1]:8080');
    expect(tunnel('http://10.0.0.7:8080', true)?.allowPlainHttp).toBe(true);
    expect(tunnel('https://10.0.0.7:8443')?.url).toBe('https://10.0.0.7:8443');
  });

  it('needs a script for the fake driver', () => {
    expect(() => parseAgentConfig({ name: 'a', drivers: ['fake'] })).toThrow(
      /fakeScript: the fake driver needs fakeScript/,
    );
  });

  it('takes the exec certificate from the file and its key from a flag, and wants https:// then', () => {
    const config = parseAgentConfig(
      { name: 'mac-1', drivers: ['simctl'], tls: { certFile: '/etc/simlock/agent.crt' } },
      { tls: { keyFile: '/etc/simlock/agent.key' } },
    );
    expect(config.tls).toEqual({
      certFile: '/etc/simlock/agent.crt',
      keyFile: '/etc/simlock/agent.key',
    });
    expect(() =>
      parseAgentConfig({
        name: 'mac-1',
        drivers: ['simctl'],
        tls: { certFile: 'agent.crt', keyFile: 'agent.key' },
        endpoint: 'http://mac-1.lab.example:8780',
      }),
    ).toThrow(/endpoint: must be https:\/\/ when tls is set/);
    // https:// without tls: a TLS-terminating reverse proxy in front of the agent.
    expect(
      parseAgentConfig({
        name: 'mac-1',
        drivers: ['simctl'],
        endpoint: 'https://mac-1.lab.example:443',
      }).endpoint,
    ).toBe('https://mac-1.lab.example:443');
  });

  it('refuses a heartbeat renewed no sooner than it lapses', () => {
    expect(() =>
      parseAgentConfig({
        name: 'a',
        drivers: ['adb'],
        heartbeat: { durationSeconds: 10, renewEverySeconds: 10 },
      }),
    ).toThrow(/heartbeat\.renewEverySeconds/);
  });

  it('is a usage error with a code', () => {
    try {
      parseAgentConfig({ drivers: ['adb'] });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(AgentConfigError);
      expect((error as AgentConfigError).code).toBe('USAGE');
    }
  });

  it('turns parser flags into a partial config', () => {
    expect(
      normalizeFlags({ _: ['x'], $0: 'agent', 'fake-script': 'a.yaml', label: undefined }),
    ).toEqual({ fakeScript: 'a.yaml' });
  });
});

describe('loading the config file', () => {
  let directory: string;

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'simlock-config-'));
  });

  afterEach(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('reads YAML and applies flags', async () => {
    const path = join(directory, 'agent.yaml');
    await writeFile(
      path,
      [
        'name: mac-1',
        'drivers: [simctl]',
        'limits:',
        '  platforms:',
        '    ios: {running: 3, ramBudgetMb: 12288}',
      ].join('\n'),
    );
    const config = await loadAgentConfig({ path, flags: { label: 'Mac 1' } });
    expect(config.label).toBe('Mac 1');
    expect(config.limits?.platforms.ios?.ramBudgetMb).toBe(12288);
  });

  it('names the file in its errors', async () => {
    const path = join(directory, 'agent.yaml');
    await writeFile(path, 'name: mac-1\ndrivers: simctl\n');
    await expect(loadAgentConfig({ path })).rejects.toThrow(new RegExp(`${path}.*\\n.*drivers`));
    await expect(loadAgentConfig({ path: join(directory, 'missing.yaml') })).rejects.toThrow(
      /cannot read/,
    );
  });
});
