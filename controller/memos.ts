// What the controller remembers about one waiting request and each worker, in memory (seed 000
// §3-4). Memos belong to a request, so they are not routing stages: routing stays pure, and the
// walk removes memo'd workers before it asks routing to pick.
import type { CannotServeCode, CapacityReason } from '../api/index.js';

export interface RequestMemos {
  /** Workers that answered a cannot-serve code: left out for good. */
  cannotServe: Map<string, CannotServeCode>;
  /** Workers that refused NO_CAPACITY: left out while their view key is the one they refused at. */
  refusals: Map<string, { viewKey: string; capacityReason?: CapacityReason | undefined }>;
  /** Workers that did not answer within the dispatch timeout: disconnected for this request. */
  unanswered: Map<string, { viewKey: string }>;
}

export function emptyMemos(): RequestMemos {
  return { cannotServe: new Map(), refusals: new Map(), unanswered: new Map() };
}
