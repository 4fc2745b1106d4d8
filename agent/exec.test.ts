import { describe, expect, it } from 'vitest';
import { aScriptedPhone } from '../test/fixtures/driver-devices.js';
import { FakeDriver } from './drivers/fake/fake.js';
import { execStream, startExec, type ExecEvent } from './exec.js';

const node = process.execPath;

async function collect(stream: AsyncIterable<ExecEvent>): Promise<ExecEvent[]> {
  const events: ExecEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

function text(events: ExecEvent[], stream: 'stdout' | 'stderr'): string {
  return events
    .filter((event) => event.type === 'output' && event.stream === stream)
    .map((event) => (event.type === 'output' ? event.data : ''))
    .join('');
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitUntil(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('the exec runner', () => {
  it('streams stdout and stderr, then the exit code', async () => {
    const events = await collect(
      execStream([
        node,
        '-e',
        "process.stdout.write('out'); process.stderr.write('err'); process.exitCode = 3",
      ]),
    );
    expect(text(events, 'stdout')).toBe('out');
    expect(text(events, 'stderr')).toBe('err');
    expect(events.at(-1)).toEqual({ type: 'exit', exitCode: 3 });
  });

  it('passes arguments as argv, never through a shell', async () => {
    const hostile = '$(echo pwned); `id` && rm -rf / ; "quoted"';
    const events = await collect(
      execStream([node, '-e', 'process.stdout.write(process.argv[1])', '--', hostile]),
    );
    expect(text(events, 'stdout')).toBe(hostile);
  });

  it('keeps a multi-byte character split across chunks whole', async () => {
    const script =
      'process.stdout.write(Buffer.from([0xe2, 0x82])); setTimeout(() => process.stdout.write(Buffer.from([0xac])), 50)';
    const events = await collect(execStream([node, '-e', script]));
    expect(text(events, 'stdout')).toBe('€');
  });

  it('stops a tool that runs past its timeout with EXEC_TIMEOUT', async () => {
    const handle = startExec(
      [node, '-e', 'setInterval(() => {}, 1000)'],
      { timeoutMs: 200 },
      () => undefined,
    );
    expect(await handle.done).toEqual({ kind: 'timed-out' });
    expect(isAlive(handle.pid!)).toBe(false);
    const events = await collect(
      execStream([node, '-e', 'setInterval(() => {}, 1000)'], { timeoutMs: 200 }),
    );
    expect(events.at(-1)).toMatchObject({ type: 'error', code: 'EXEC_TIMEOUT' });
  });

  it('kills a tool that ignores SIGTERM after the grace period', async () => {
    const script =
      "process.on('SIGTERM', () => {}); console.log('ready'); setInterval(() => {}, 1000)";
    const controller = new AbortController();
    const handle = startExec(
      [node, '-e', script],
      { signal: controller.signal, killGraceMs: 200 },
      (event) => {
        if (event.type === 'output') controller.abort(); // SIGTERM now, ignored; SIGKILL 200 ms later
      },
    );
    expect(await handle.done).toEqual({ kind: 'aborted' });
    expect(isAlive(handle.pid!)).toBe(false);
  });

  it('stops the tool and what it started when the caller aborts', async () => {
    // The tool starts a grandchild, prints its pid, and waits.
    const script = [
      "const { spawn } = require('node:child_process');",
      "const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });",
      'console.log(child.pid); setInterval(() => {}, 1000);',
    ].join('\n');
    const controller = new AbortController();
    let grandchild = 0;
    const handle = startExec([node, '-e', script], { signal: controller.signal }, (event) => {
      if (event.type === 'output') grandchild = Number(event.data.trim());
    });
    await waitUntil(() => grandchild > 0);
    controller.abort();
    expect(await handle.done).toEqual({ kind: 'aborted' });
    await waitUntil(() => !isAlive(grandchild));
  });

  it('stops the tool and what it started when its lease ends, ending with LEASE_LOST and why', async () => {
    const script = [
      "const { spawn } = require('node:child_process');",
      "const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });",
      'console.log(child.pid); setInterval(() => {}, 1000);',
    ].join('\n');
    const leaseEnded = new AbortController();
    let grandchild = 0;
    let exited = 0;
    const events: ExecEvent[] = [];
    const handle = startExec(
      [node, '-e', script],
      { leaseEnded: leaseEnded.signal, onExited: () => (exited += 1) },
      (event) => {
        events.push(event);
        if (event.type === 'output') grandchild = Number(event.data.trim());
      },
    );
    await waitUntil(() => grandchild > 0);
    leaseEnded.abort('lease ci-1 ended while the tool ran: holder gone; the tool was stopped');
    expect(await handle.done).toEqual({ kind: 'lease-lost' });
    expect(events.at(-1)).toEqual({
      type: 'error',
      code: 'LEASE_LOST',
      message: 'lease ci-1 ended while the tool ran: holder gone; the tool was stopped',
    });
    expect(exited).toBe(1);
    expect(isAlive(handle.pid!)).toBe(false);
    await waitUntil(() => !isAlive(grandchild));
  });

  it('kills a tool that ignores SIGTERM when its lease ends, after the short grace', async () => {
    const script =
      "process.on('SIGTERM', () => {}); console.log('ready'); setInterval(() => {}, 1000)";
    const leaseEnded = new AbortController();
    const started = Date.now();
    const handle = startExec(
      [node, '-e', script],
      { leaseEnded: leaseEnded.signal, leaseEndGraceMs: 300, killGraceMs: 60_000 },
      (event) => {
        if (event.type === 'output') leaseEnded.abort('lease ended');
      },
    );
    expect(await handle.done).toEqual({ kind: 'lease-lost' });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(isAlive(handle.pid!)).toBe(false);
  });

  it('stops the tool when the reader leaves the loop early', async () => {
    let pid = 0;
    for await (const event of execStream([
      node,
      '-e',
      'console.log(process.pid); setInterval(() => {}, 1000)',
    ])) {
      if (event.type === 'output') {
        pid = Number(event.data.trim());
        break;
      }
    }
    await waitUntil(() => !isAlive(pid));
  });

  it('reports a tool that cannot start', async () => {
    const events = await collect(execStream(['/nonexistent/simlock-tool']));
    expect(events).toEqual([
      { type: 'error', code: 'INTERNAL', message: expect.stringContaining('ENOENT') as string },
    ]);
  });

  it('runs the fake driver exec for real: the argv printed names the leased device', async () => {
    const udid = '00008110-001A2B3C4D5E';
    const driver = new FakeDriver({
      devices: [aScriptedPhone(udid)],
    });
    const device = (await driver.listDevices()).devices[0]!;
    const plan = driver.execArgv('devicectl', ['device', 'info', 'apps'], device);
    if (!plan.ok) throw new Error(plan.message);
    const events = await collect(execStream(plan.argv));
    expect(events).toEqual([
      {
        type: 'output',
        stream: 'stdout',
        data: `fake-tool: devicectl device info apps --device ${udid}\n`,
      },
      { type: 'exit', exitCode: 0 },
    ]);
  });
});
