// The measured agent's heap, read through the V8 inspector it listens with (`--inspect` on
// loopback). Heap used read off /metrics is wherever the collector happened to be at that moment
// (it swings by a fifth between two minor collections), so a growth figure from it says little; read
// after a full collection, it is what the process keeps. A heap snapshot shows what that is.
import { createWriteStream } from 'node:fs';
import { z } from 'zod';

const Targets = z.array(z.object({ webSocketDebuggerUrl: z.string() })).min(1);
const Message = z.object({
  id: z.number().optional(),
  method: z.string().optional(),
  params: z.record(z.string(), z.unknown()).optional(),
  result: z.record(z.string(), z.unknown()).optional(),
  error: z.object({ message: z.string() }).optional(),
});
const SnapshotChunk = z.object({ chunk: z.string() });

type Pending = { resolve: (result: Record<string, unknown>) => void; reject: (e: Error) => void };

/** One inspector session over the WebSocket the process serves; closed after each use. */
class InspectorSession {
  #nextId = 1;
  readonly #pending = new Map<number, Pending>();
  readonly #listeners = new Map<string, (params: Record<string, unknown>) => void>();

  private constructor(private readonly socket: WebSocket) {
    socket.addEventListener('message', (event) => {
      const message = Message.safeParse(JSON.parse(String(event.data)));
      if (!message.success) return;
      const { id, method, params, result, error } = message.data;
      if (method) this.#listeners.get(method)?.(params ?? {});
      if (id === undefined) return;
      const pending = this.#pending.get(id);
      this.#pending.delete(id);
      if (error) pending?.reject(new Error(`inspector: ${error.message}`));
      else pending?.resolve(result ?? {});
    });
    socket.addEventListener('close', () => {
      for (const pending of this.#pending.values()) pending.reject(new Error('inspector closed'));
      this.#pending.clear();
    });
  }

  static async open(port: number): Promise<InspectorSession> {
    const response = await fetch(`http://127.0.0.1:${port}/json/list`, {
      signal: AbortSignal.timeout(5000),
    });
    const [target] = Targets.parse(await response.json());
    if (!target) throw new Error('the inspector lists no target');
    const socket = new WebSocket(target.webSocketDebuggerUrl);
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('open', () => resolve(), { once: true });
      socket.addEventListener('error', () => reject(new Error('inspector: cannot connect')), {
        once: true,
      });
    });
    return new InspectorSession(socket);
  }

  on(method: string, listener: (params: Record<string, unknown>) => void): void {
    this.#listeners.set(method, listener);
  }

  call(method: string, params: Record<string, unknown> = {}, timeoutMs = 60_000) {
    const id = this.#nextId++;
    return new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`inspector: ${method} took over ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(id, {
        resolve: (result) => (clearTimeout(timer), resolve(result)),
        reject: (error) => (clearTimeout(timer), reject(error)),
      });
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }

  close(): void {
    this.socket.close();
  }
}

async function withSession<T>(port: number, use: (session: InspectorSession) => Promise<T>) {
  const session = await InspectorSession.open(port);
  try {
    return await use(session);
  } finally {
    session.close();
  }
}

/**
 * Run in the process: a full collection, then the heap used read at once, from a task of its own.
 * Two inspector calls (HeapProfiler.collectGarbage, then Runtime.getHeapUsage) let the event loop
 * run between them, and the inspector may break into the process in the middle of its work, with
 * what that work is building still on the stack: a process that made 32 MiB of garbage every 50 ms
 * read 150 MiB where it kept 32, on a loaded machine. From a task of its own nothing but this runs
 * between the collection and the reading. (Pausing the process around the two calls does not do:
 * the collection waits for a task a paused process never runs.) `gc` is the one V8 gives a context
 * made after --expose-gc is set. `require` is the one Node's inspector offers an evaluation with
 * the command line API, there only while the evaluation runs: the modules are taken then, and the
 * task catches whatever it meets, as an uncaught throw there would end the process.
 */
const COLLECT_THEN_READ = `((v8, vm) => new Promise((resolve, reject) => setImmediate(() => {
  try {
    v8.setFlagsFromString('--expose-gc');
    vm.runInNewContext('gc')();
    resolve(v8.getHeapStatistics().used_heap_size);
  } catch (error) {
    reject(error);
  }
})))(require('v8'), require('vm'))`;
const Evaluated = z.object({
  result: z.object({ value: z.unknown() }),
  exceptionDetails: z.object({ text: z.string().optional() }).optional(),
});

/** Heap used, in bytes, right after a full collection. */
export function heapAfterCollection(port: number): Promise<number> {
  return withSession(port, async (session) => {
    const { result, exceptionDetails } = Evaluated.parse(
      await session.call('Runtime.evaluate', {
        expression: COLLECT_THEN_READ,
        includeCommandLineAPI: true,
        awaitPromise: true,
        returnByValue: true,
      }),
    );
    if (exceptionDetails || typeof result.value !== 'number')
      throw new Error(`inspector: no heap read: ${exceptionDetails?.text ?? 'no number answered'}`);
    return result.value;
  });
}

/** Writes a heap snapshot (Chrome's .heapsnapshot format) to `path`. */
export function writeHeapSnapshot(port: number, path: string): Promise<void> {
  return withSession(port, async (session) => {
    const file = createWriteStream(path);
    session.on('HeapProfiler.addHeapSnapshotChunk', (params) => {
      file.write(SnapshotChunk.parse(params).chunk);
    });
    await session.call('HeapProfiler.enable');
    await session.call('HeapProfiler.takeHeapSnapshot', { reportProgress: false }, 300_000);
    await new Promise<void>((resolve, reject) =>
      file.end((error?: Error | null) => (error ? reject(error) : resolve())),
    );
  });
}
