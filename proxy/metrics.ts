// Prometheus metrics of the exec proxy (docs/OPERATIONS.md and docs/HTTP-API.md name them).
import { MetricSet } from '../runtime/index.js';

/**
 * How an exec call ended, the `outcome` of simlock_proxy_exec_requests_total. Refused by the
 * proxy: unauthenticated, forbidden, invalid (not an exec request), not-found, not-active (the
 * lease is not granted). Not reached: unavailable (no endpoint and no tunnel here, or the agent or
 * the replica holding its tunnel did not answer), endpoint-refused (agent-tls.ts), client-gone
 * (the caller left first). Refused by the agent before anything ran: `agent-<HTTP status>`.
 * Ended: streamed, lease-lost (the lease ended under it), agent-gone (the agent's stream broke),
 * forwarded and forwarded-cut (passed to the replica holding the tunnel: tunnel-forward.ts),
 * error (the proxy failed).
 */
export type ExecOutcome =
  | 'unauthenticated'
  | 'forbidden'
  | 'invalid'
  | 'not-found'
  | 'not-active'
  | 'unavailable'
  | 'endpoint-refused'
  | 'client-gone'
  | `agent-${number}`
  | 'streamed'
  | 'lease-lost'
  | 'agent-gone'
  | 'forwarded'
  | 'forwarded-cut'
  | 'error';

export class ProxyMetrics extends MetricSet {
  readonly requests = this.counter(
    'simlock_proxy_exec_requests_total',
    'Exec requests by outcome.',
    ['outcome'],
  );
  readonly tokenReviews = this.counter(
    'simlock_proxy_token_reviews_total',
    "TokenReviews of callers' tokens asked of the API server (a token remembered is not asked again).",
  );
  readonly seconds = this.histogram(
    'simlock_proxy_exec_duration_seconds',
    'Duration of exec streams.',
    [0.1, 0.5, 1, 5, 30, 120, 600],
  );

  /** `simlock_proxy_agent_tunnels`: the agents whose tunnels this replica holds, read at each scrape. */
  watchTunnels(tunnels: { readonly size: number }): void {
    const held = this.gauge(
      'simlock_proxy_agent_tunnels',
      'Agents connected to this proxy through a tunnel.',
      [],
      () => {
        held.set(tunnels.size);
      },
    );
  }
}
