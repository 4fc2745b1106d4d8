// The startup check of a process's permissions: every one it needs (its own list, beside its
// main.ts) asked of the API server's authorizer with SelfSubjectAccessReviews, so that a process
// short of one stops at once with a line per missing permission, instead of retrying forbidden
// lists and writes for ever while looking healthy. The reviews are allowed to every authenticated
// identity (the built-in system:basic-user role); where a cluster forbids them, or has no such API,
// the check is skipped with a warning rather than refusing to start. An API server that cannot be
// reached is waited for, as every other request of the process would wait (ADR 0015).
import { z } from 'zod';
import { selfMay, type ResourceAttributes } from './access-review.js';
import type { KubeClient } from './kube-client.js';
import { isTransient, KubeApiError } from './kube-errors.js';
import type { Logger } from './log.js';

/** A permission a process needs, and what for (shown when it is missing). */
export interface Permission extends ResourceAttributes {
  why: string;
}

export type PermissionCheck =
  { checked: true; missing: Permission[] } | { checked: false; reason: string };

/** One line: verb, resource with its API group, the name if one, where. */
export function describePermission(permission: Permission): string {
  const { verb, group, resource, subresource, name, namespace } = permission;
  const what = `${resource}${subresource ? `/${subresource}` : ''}`;
  const inGroup = group ? `in API group "${group}"` : 'in the core API group';
  const named = name ? ` named "${name}"` : '';
  const where = namespace ? `in namespace "${namespace}"` : 'in all namespaces';
  return `${verb} ${what}${named} ${inGroup} ${where} (${permission.why})`;
}

/** What the review asks: the attributes without the explanation. */
function attributesOf(permission: Permission): ResourceAttributes {
  const { why: _why, ...attributes } = permission;
  return attributes;
}

/** Asks about every permission at once; waits out an API server that cannot answer yet. */
export async function checkPermissions(
  client: KubeClient,
  permissions: Permission[],
  log: Logger,
  retryDelaysMs: readonly number[] = [500, 1000, 2000, 5000],
): Promise<PermissionCheck> {
  for (let attempt = 0; ; attempt++) {
    try {
      const allowed = await Promise.all(
        permissions.map((permission) => selfMay(client, attributesOf(permission))),
      );
      return { checked: true, missing: permissions.filter((_, index) => !allowed[index]) };
    } catch (error) {
      if (!isTransient(error)) {
        const reason = error instanceof Error ? error.message : String(error);
        if (error instanceof KubeApiError) return { checked: false, reason };
        throw error;
      }
      const delay = retryDelaysMs[Math.min(attempt, retryDelaysMs.length - 1)] ?? 5000;
      log.warn('cannot check permissions yet; trying again', { error, delayMs: delay });
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

const SelfSubjectReviewAnswer = z.object({
  status: z.object({ userInfo: z.object({ username: z.string().max(1024).optional() }) }),
});

/** The user name the API server sees for `client`, or undefined if it will not say. */
export async function whoAmI(client: KubeClient): Promise<string | undefined> {
  try {
    const answer = SelfSubjectReviewAnswer.safeParse(
      await client.create('/apis/authentication.k8s.io/v1/selfsubjectreviews', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'SelfSubjectReview',
      }),
    );
    return answer.success ? answer.data.status.userInfo.username : undefined;
  } catch {
    return undefined;
  }
}

/** What a process short of permissions prints before it exits: a line for each, then who it is. */
export function refusalLines(
  program: string,
  missing: Permission[],
  asked: number,
  user: string | undefined,
): string[] {
  return [
    ...missing.map(
      (permission) => `${program}: missing permission: ${describePermission(permission)}`,
    ),
    `${program}: ${missing.length} of ${asked} permissions missing${user ? ` for ${user}` : ''}; grant them (the chart's roles do) and start it again`,
  ];
}

/**
 * The startup check as the processes run it: undefined when everything is granted (or when the
 * check cannot be made, with a warning); otherwise the lines to print before exiting non-zero,
 * so that the pod's logs say what to grant and kubelet shows CrashLoopBackOff.
 */
export async function startupRefusal(
  program: string,
  client: KubeClient,
  permissions: Permission[],
  log: Logger,
): Promise<string[] | undefined> {
  const check = await checkPermissions(client, permissions, log);
  if (!check.checked) {
    log.warn('cannot check permissions at startup; going on without the check', {
      reason: check.reason,
    });
    return undefined;
  }
  if (check.missing.length === 0) return undefined;
  return refusalLines(program, check.missing, permissions.length, await whoAmI(client));
}
