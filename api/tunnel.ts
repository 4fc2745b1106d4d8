// The agent's tunnel to the exec proxy (ADR 0024): where the agent connects, and the permission an
// agent identity needs to serve a worker through it (as the node authorizer confines a kubelet to
// its own node, an agent serves only the Worker it is granted).
import { GROUP, RESOURCES } from './names.js';

/** The path of the tunnel of worker `name` on the exec proxy (a WebSocket upgrade). */
export function tunnelPath(worker: string): string {
  return `/v1/workers/${encodeURIComponent(worker)}/tunnel`;
}

/** The header a proxy replica names itself in when it accepts a tunnel (ADR 0024). */
export const TUNNEL_PROXY_HEADER = 'x-simlock-proxy';

/** The subresource of a Worker whose `create` lets an identity serve that worker's tunnel. */
export const TUNNEL_SUBRESOURCE = 'tunnel';

/** What a SubjectAccessReview asks before an identity may hold worker `name`'s tunnel. */
export function tunnelAccess(worker: string): {
  verb: 'create';
  group: string;
  resource: string;
  subresource: string;
  name: string;
} {
  return {
    verb: 'create',
    group: GROUP,
    resource: RESOURCES.worker.plural,
    subresource: TUNNEL_SUBRESOURCE,
    name: worker,
  };
}
