// Waiting for the control plane's processes: /readyz probed with a client certificate, and the
// story of each wait (what it answered, for how long), so a slow start says what held it up.
import { readFileSync } from 'node:fs';
import { request } from 'node:https';

/** A client certificate and its key, as files. */
export interface ClientCertificate {
  certificatePath: string;
  keyPath: string;
}

/**
 * GET a path on the API server with a client certificate; answers the HTTP status (0 if down)
 * and the start of the body (a not-ready /readyz?verbose lists its failing checks).
 */
function probe(
  server: string,
  caPath: string,
  client: ClientCertificate,
  path: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const url = new URL(path, server);
    const req = request(
      url,
      {
        ca: readFileSync(caPath),
        cert: readFileSync(client.certificatePath),
        key: readFileSync(client.keyPath),
        timeout: 2000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (body.length < 20_000) body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', () => resolve({ status: 0, body: 'the answer broke off' }));
      },
    );
    req.on('error', (error) => resolve({ status: 0, body: error.message }));
    req.on('timeout', () => req.destroy(new Error('timed out after 2 s')));
    req.end();
  });
}

/** Why /readyz is not 200 yet: its failing checks ("[-]..."), or how the request failed. */
export async function notReady(
  server: string,
  caPath: string,
  client: ClientCertificate,
): Promise<string | undefined> {
  const { status, body } = await probe(server, caPath, client, '/readyz?verbose');
  if (status === 200) return undefined;
  const failing = body
    .split('\n')
    .filter((line) => line.startsWith('[-]'))
    .join('; ');
  return `${status === 0 ? 'no answer' : `HTTP ${status}`}: ${failing || body.slice(0, 300)}`;
}

/**
 * Polls `check` (undefined: ready; a string: why not) until ready, a death or the deadline.
 * Answers the story of the wait: each answer in a row and how long it lasted, e.g.
 * "no answer: connect ECONNREFUSED 3.1 s; HTTP 500: [-]etcd failed 12.0 s".
 */
export async function waitFor(
  what: string,
  check: () => Promise<string | undefined>,
  timeoutMs: number,
  died: () => string | undefined,
): Promise<string> {
  const start = Date.now();
  const deadline = start + timeoutMs;
  const answers: { why: string; since: number }[] = [];
  const story = () =>
    answers
      .map(({ why, since }, index) => {
        const until = answers[index + 1]?.since ?? Date.now();
        return `${why} ${((until - since) / 1000).toFixed(1)} s`;
      })
      .join('; ');
  for (;;) {
    const death = died();
    if (death) throw new Error(`${what}: ${death}`);
    const why = await check();
    if (why === undefined) return story();
    if (answers.at(-1)?.why !== why) answers.push({ why, since: Date.now() });
    if (Date.now() > deadline)
      throw new Error(`${what}: not ready within ${timeoutMs} ms; its answers: ${story()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
