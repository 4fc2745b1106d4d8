// simlock-proxy: the exec proxy process.
//   node --import tsx proxy/main.ts --listen 0.0.0.0:8443 [--kubeconfig FILE] [--agent-token-file F]
//     [--agent-ca-file CA.pem] [--allow-plain-http-agents]
import { readFileSync } from 'node:fs';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { KubeClient, createLogger, startupRefusal, userAgent } from '../runtime/index.js';
import { ActivityRecorder, leaseStatusActivityStore } from './activity.js';
import { proxyPermissions } from './permissions.js';
import { ProxyMetrics } from './metrics.js';
import { TOKEN_REVIEW_CACHE_MS, createProxyApp } from './server.js';
import { AgentTunnels, serveTunnels } from './tunnel-server.js';

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

async function main(): Promise<void> {
  const argv = await yargs(hideBin(process.argv))
    .scriptName('simlock-proxy')
    // A flag given twice takes its last value, as Go's flag package has it: the chart's
    // proxy.extraArgs come after its own flags and so may override them.
    .parserConfiguration({ 'duplicate-arguments-array': false })
    .option('kubeconfig', { type: 'string' })
    .option('context', { type: 'string' })
    .option('listen', { type: 'string', default: '0.0.0.0:8443' })
    .option('token-review-cache-seconds', {
      type: 'number',
      default: TOKEN_REVIEW_CACHE_MS / 1000,
      describe:
        'how long a caller token the API server accepted is remembered (0: ask on every exec)',
    })
    .option('advertise-url', {
      type: 'string',
      describe:
        "this replica's URL for the other replicas (http://$(POD_IP):8443): calls for a worker whose tunnel another replica holds are forwarded there",
    })
    .option('agent-token-file', {
      type: 'string',
      default: SERVICE_ACCOUNT_TOKEN,
      describe: 'the token the proxy presents to agents; re-read on every call (it rotates)',
    })
    .option('agent-ca-file', {
      type: 'string',
      describe:
        "PEM bundle of the CAs that sign agents' exec certificates (read on every call); none: the system's roots",
    })
    .option('allow-plain-http-agents', {
      type: 'boolean',
      default: false,
      describe:
        'also dial agents whose endpoint is http:// (a local demo: the token crosses in clear)',
    })
    .strict()
    .parseAsync();
  const log = createLogger({ component: 'proxy' });
  const separator = argv.listen.lastIndexOf(':');
  const port = Number(argv.listen.slice(separator + 1));
  if (separator < 0 || !Number.isInteger(port) || port < 0 || port > 65535) {
    console.error('simlock-proxy: --listen must be host:port');
    process.exit(2);
  }
  const client = KubeClient.fromOptions({
    kubeconfig: argv.kubeconfig,
    context: argv.context,
    userAgent: userAgent('simlock-proxy'),
  });
  const metrics = new ProxyMetrics(true);
  // Agents behind NAT connect here (ADR 0024); their execs go through their tunnels.
  const tunnels = new AgentTunnels();
  metrics.watchTunnels(tunnels);
  const app = createProxyApp({
    client,
    log,
    tunnels,
    advertiseUrl: argv['advertise-url'],
    activity: new ActivityRecorder({ store: leaseStatusActivityStore(client), log }),
    metrics,
    tokenReviewCacheMs: Math.max(0, argv['token-review-cache-seconds']) * 1000,
    agentToken: () => readFileSync(argv['agent-token-file'], 'utf8').trim(),
    agentTls: {
      caFile: argv['agent-ca-file'],
      allowPlainHttp: argv['allow-plain-http-agents'],
    },
  });
  if (argv['allow-plain-http-agents'])
    log.warn('--allow-plain-http-agents: agents on http:// are dialled, the token sent in clear');
  const server = app.listen(port, argv.listen.slice(0, separator) || '0.0.0.0', () => {
    const address = server.address();
    log.info('listening', { port: typeof address === 'object' && address ? address.port : port });
  });
  serveTunnels(server, { client, log, tunnels, advertiseUrl: argv['advertise-url'] });
  const shutdown = () => {
    server.close(() => process.exit(0));
    // The execs in flight end first; then the tunnels go, which lets the server close.
    void tunnels.closeWhenIdle();
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
  // Listening already (so /healthz answers while an unreachable API server is waited for): a proxy
  // short of a permission says which and exits, instead of failing every exec.
  const refusal = await startupRefusal('simlock-proxy', client, proxyPermissions(), log);
  if (refusal) {
    for (const line of refusal) console.error(line);
    process.exit(1);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
