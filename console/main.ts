// simlock-console: the console's server process.
//   node --import tsx console/main.ts [--kubeconfig FILE] [--port 0] [--mode local|token]
// Local mode (the default, what `kubectl simlock console` runs): 127.0.0.1, the kubeconfig's
// person, and a URL with a key, printed on the first line of stdout. Token mode (the chart): each
// person logs in with a bearer token; listen on 0.0.0.0 behind a Service.
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { formatDuration, parseDuration } from '../api/index.js';
import { KubeClient, createLogger, userAgent } from '../runtime/index.js';
import { DEFAULT_ATTENTION } from './model/attention.js';
import { startConsole } from './server/server.js';

async function main(): Promise<void> {
  const argv = await yargs(hideBin(process.argv))
    .scriptName('simlock-console')
    .option('kubeconfig', {
      type: 'string',
      describe: 'default: $KUBECONFIG, ~/.kube/config, or in-cluster',
    })
    .option('context', { type: 'string' })
    .option('mode', {
      choices: ['local', 'token'] as const,
      default: 'local' as const,
      describe: "local: the kubeconfig's person; token: each person logs in with a bearer token",
    })
    .option('host', { type: 'string', describe: 'default: 127.0.0.1 (local), 0.0.0.0 (token)' })
    .option('port', { type: 'number', default: 0, describe: '0: any free port' })
    .option('simlock-namespace', { type: 'string', default: 'simlock-system' })
    .option('namespace', {
      type: 'string',
      describe:
        "only requests and leases of this namespace (default: every namespace the identity may list, else its context's)",
    })
    .option('proxy-url', {
      type: 'string',
      describe: 'the exec proxy (default: ConfigMap simlock)',
    })
    .option('secure-cookies', { type: 'boolean', default: false, describe: 'served over HTTPS' })
    .option('max-lease-duration', {
      type: 'string',
      default: formatDuration(DEFAULT_ATTENTION.maxLeaseSeconds),
      describe: "the controller's --max-lease-duration: the Attention page's leases near it",
    })
    .option('attention-waiting-over', {
      type: 'string',
      default: formatDuration(DEFAULT_ATTENTION.waitingOverSeconds),
      describe: 'the Attention page lists requests waiting longer',
    })
    .option('attention-drained-over', {
      type: 'string',
      default: formatDuration(DEFAULT_ATTENTION.drainedOverSeconds),
      describe: 'the Attention page lists workers drained longer',
    })
    .strict()
    .parseAsync();
  const log = createLogger({ component: 'console' });
  if (!Number.isInteger(argv.port) || argv.port < 0 || argv.port > 65535) {
    console.error('simlock-console: --port must be 0 to 65535');
    process.exit(2);
  }
  const seconds = (flag: string, value: string, min: number): number => {
    const parsed = parseDuration(value);
    if (parsed === undefined || !Number.isInteger(parsed) || parsed < min) {
      console.error(`simlock-console: --${flag} must be a duration such as 24h or 90m`);
      process.exit(2);
    }
    return parsed;
  };
  const attention = {
    maxLeaseSeconds: seconds('max-lease-duration', argv['max-lease-duration'], 1),
    waitingOverSeconds: seconds('attention-waiting-over', argv['attention-waiting-over'], 0),
    drainedOverSeconds: seconds('attention-drained-over', argv['attention-drained-over'], 0),
  };
  const host = argv.host ?? (argv.mode === 'local' ? '127.0.0.1' : '0.0.0.0');
  const running = await startConsole({
    client: KubeClient.fromOptions({
      kubeconfig: argv.kubeconfig,
      context: argv.context,
      userAgent: userAgent('simlock-console'),
    }),
    mode: argv.mode,
    log,
    host,
    port: argv.port,
    simlockNamespace: argv['simlock-namespace'],
    namespace: argv.namespace,
    proxyUrl: argv['proxy-url'],
    secureCookies: argv['secure-cookies'],
    attention,
  });
  process.stdout.write(`simlock console: ${running.openUrl}\n`);
  log.info('listening', { url: running.url, mode: argv.mode });
  const shutdown = () => void running.stop().then(() => process.exit(0));
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

main().catch((error: unknown) => {
  console.error(`simlock-console: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
