// A small client for the exec proxy, and where the chart says the proxy is: shared by the typed
// client (and so the plugin) and the console; it lives in runtime/, not in the contract, because it
// does I/O:
//   const { exitCode } = await execThroughProxy({ url, token, namespace, lease, tool: 'adb',
//     args: ['shell', 'getprop'], onOutput: (stream, data) => process[stream].write(data) });
// It reads the Server-Sent Events as they come and never holds a whole output in memory.
import { z } from 'zod';
import {
  ERRORS,
  ExecErrorEvent,
  ExecExitEvent,
  ExecOutputEvent,
  HttpErrorBody,
  SimlockError,
  type ErrorCode,
  type ExecTool,
} from '../api/index.js';
import type { KubeClient } from './kube-client.js';

export interface ExecThroughProxy {
  /** The proxy's base URL, e.g. https://simlock-proxy.simlock-system.svc:8443 */
  url: string;
  /** A bearer token the proxy can review (a service-account or user token). */
  token: string;
  namespace: string;
  lease: string;
  tool: ExecTool;
  args: string[];
  timeoutSeconds?: number;
  /** base64: each output's data is one chunk's bytes in base64 (binary output such as a PNG). */
  encoding?: 'utf8' | 'base64';
  onOutput: (stream: 'stdout' | 'stderr', data: string) => void;
  signal?: AbortSignal;
  /** Extra fetch options (a dispatcher with a custom CA, for example). */
  fetchOptions?: Record<string, unknown>;
}

const MAX_EVENT_BYTES = 4 * 1024 * 1024;

const ProxyConfigMap = z.object({ data: z.object({ proxyUrl: z.string().max(2048) }).optional() });

/**
 * The exec proxy's URL as the chart (and `npm run up`) publish it, in the ConfigMap `simlock` of
 * the namespace it is installed in; undefined when it cannot be read or names no http(s) URL. Each
 * caller says in its own words what to do then.
 */
export async function chartProxyUrl(
  client: KubeClient,
  simlockNamespace: string,
): Promise<string | undefined> {
  try {
    const map = ProxyConfigMap.parse(
      await client.get(`/api/v1/namespaces/${simlockNamespace}/configmaps/simlock`),
    );
    const url = map.data?.proxyUrl;
    if (url && /^https?:\/\//.test(url)) return url;
  } catch {
    // undefined: said by the caller
  }
  return undefined;
}

function errorCode(code: string): ErrorCode {
  return code in ERRORS ? (code as ErrorCode) : 'INTERNAL';
}

export async function execThroughProxy(options: ExecThroughProxy): Promise<{ exitCode: number }> {
  const url = new URL(
    `/v1/namespaces/${encodeURIComponent(options.namespace)}/leases/${encodeURIComponent(options.lease)}/exec`,
    options.url,
  );
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${options.token}`,
        'content-type': 'application/json',
        accept: 'text/event-stream',
      },
      body: JSON.stringify({
        tool: options.tool,
        args: options.args,
        ...(options.timeoutSeconds ? { timeoutSeconds: options.timeoutSeconds } : {}),
        ...(options.encoding ? { encoding: options.encoding } : {}),
      }),
      signal: options.signal ?? null,
      ...options.fetchOptions,
    });
  } catch (error) {
    throw new SimlockError(
      'UNAVAILABLE',
      `the exec proxy at ${options.url} could not be reached: ${(error as Error).message}`,
    );
  }
  if (!response.ok || !response.body) {
    const text = await response.text().catch(() => '');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const body = HttpErrorBody.safeParse(parsed);
    if (body.success)
      throw new SimlockError(
        errorCode(body.data.error.code),
        body.data.error.message,
        body.data.error.details,
      );
    throw new SimlockError('INTERNAL', `the exec proxy answered HTTP ${response.status}`);
  }

  const decoder = new TextDecoder();
  let buffered = '';
  let exitCode: number | undefined;
  let failure: SimlockError | undefined;
  // SSE frames end with a blank line; each has an `event:` and one `data:` line (ours never split).
  const handleFrame = (frame: string) => {
    let event = 'message';
    let data = '';
    for (const line of frame.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data += line.slice(5).trimStart();
    }
    let payload: unknown;
    try {
      payload = JSON.parse(data);
    } catch {
      return;
    }
    if (event === 'output') {
      const output = ExecOutputEvent.safeParse(payload);
      if (output.success) options.onOutput(output.data.stream, output.data.data);
    } else if (event === 'exit') {
      const exit = ExecExitEvent.safeParse(payload);
      if (exit.success) exitCode = exit.data.exitCode;
    } else if (event === 'error') {
      const error = ExecErrorEvent.safeParse(payload);
      if (error.success) failure = new SimlockError(errorCode(error.data.code), error.data.message);
    }
  };
  for await (const chunk of response.body) {
    buffered += decoder.decode(chunk as Uint8Array, { stream: true });
    if (buffered.length > MAX_EVENT_BYTES)
      throw new SimlockError('INTERNAL', 'an exec event was too large');
    let end: number;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      handleFrame(buffered.slice(0, end));
      buffered = buffered.slice(end + 2);
    }
  }
  if (failure) throw failure;
  if (exitCode === undefined)
    throw new SimlockError('UNAVAILABLE', 'the exec stream ended without an exit code');
  return { exitCode };
}
