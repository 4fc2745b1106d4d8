// How the agent is reached: its exec server's TLS (direct mode, ADR 0025) and its tunnel out to the
// exec proxy (a host behind NAT, ADR 0024). Parts of the agent's config (config.ts).
import { z } from 'zod';

export const TlsConfig = z
  .strictObject({
    certFile: z
      .string()
      .min(1)
      .max(1024)
      .describe(
        "The exec server's certificate (PEM, its chain after it): its names must include the endpoint's host.",
      ),
    keyFile: z.string().min(1).max(1024).describe("The certificate's private key (PEM)."),
  })
  .optional()
  .describe(
    'The exec server serves HTTPS with this certificate, read again when a file changes (checked at each new connection). None: plain HTTP, which a proxy refuses unless it runs with --allow-plain-http-agents (a local demo; docs/adr/0025-agent-tls.md).',
  );

export const TunnelConfig = z
  .strictObject({
    url: z
      .url({ protocol: /^(https?|wss?)$/ })
      .max(512)
      .describe('The exec proxy this agent connects out to (https://…); its execs come that way.'),
    caFile: z
      .string()
      .min(1)
      .max(1024)
      .optional()
      .describe(
        "The CA (PEM) that signed the proxy's certificate, when it is not one the system trusts; read again at each connect.",
      ),
    allowPlainHttp: z
      .boolean()
      .optional()
      .describe(
        'Connect over plain http:// to a proxy that is not on loopback (a local demo): the token then crosses the network unencrypted.',
      ),
  })
  // The agent presents its bearer token on connect: over plain HTTP anyone on the path reads it.
  // Loopback (a port-forward) stays allowed; elsewhere it takes the explicit setting.
  .refine(
    (tunnel) =>
      tunnel.allowPlainHttp === true ||
      !/^(http|ws):$/.test(new URL(tunnel.url).protocol) ||
      isLoopback(new URL(tunnel.url).hostname),
    {
      message:
        "plain http:// would send the agent's token unencrypted to a proxy off this host: use https://, or set tunnel.allowPlainHttp (--tunnel-allow-plain-http) for a local demo",
      path: ['url'],
    },
  )
  .optional()
  .describe(
    'A host behind NAT: the agent connects to the exec proxy and serves exec through that connection (ADR 0024). Without an endpoint it then listens on no port.',
  );

/** localhost, 127.0.0.0/8 or ::1 (as URL.hostname spells it, in brackets). */
function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}
