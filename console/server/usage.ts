// The controller's usage history for the Usage page (ADR 0027): the ConfigMap simlock-usage of the
// system namespace, read with the person's own credentials (so their RBAC decides, as for every
// action), and parsed with the contract's schema before it is sent on.
import {
  SimlockError,
  USAGE_CONFIGMAP,
  USAGE_DATA_KEY,
  UsageHistoryDocument,
} from '../../api/index.js';
import { isNotFound } from '../../runtime/index.js';
import { asSimlockError } from './actions.js';
import type { Person } from './sessions.js';

export async function readUsage(
  person: Person,
  simlockNamespace: string,
): Promise<UsageHistoryDocument> {
  const where = `ConfigMap ${simlockNamespace}/${USAGE_CONFIGMAP}`;
  let map: { data?: Record<string, string> };
  try {
    map = (await person.client.get(
      `/api/v1/namespaces/${simlockNamespace}/configmaps/${USAGE_CONFIGMAP}`,
    )) as { data?: Record<string, string> };
  } catch (error) {
    if (isNotFound(error))
      throw new SimlockError(
        'NOT_FOUND',
        `the controller has not published its usage history yet (${where}): it does so a minute after it starts leading, unless its --usage-publish-interval is 0`,
      );
    throw asSimlockError(error);
  }
  const text = map.data?.[USAGE_DATA_KEY];
  let parsed: unknown;
  try {
    parsed = text === undefined ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const document = UsageHistoryDocument.safeParse(parsed);
  if (!document.success)
    throw new SimlockError(
      'INTERNAL',
      `${where} does not hold a usage history this console reads (is the controller of another release?)`,
    );
  return document.data;
}
