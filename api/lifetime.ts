// A lease's lifetime beyond its first duration: extension, the holder's renewals, idle reclaim,
// force release and the expiring-soon warning. Names, reasons and bounds shared by the controller,
// the proxy, the plugin and the chart (ADR 0008).

/** Label on a holder session's coordination.k8s.io Lease; the controller watches only these. */
export const HOLDER_SESSION_LABEL = 'simlock.dev/holder-session';

/**
 * Annotation an operator sets on a LeaseRequest to release it by force. Its value is the
 * operator's own username; the chart's admission policy allows it only to identities that may
 * `force-release` leaserequests (a custom verb, asked as a SubjectAccessReview) and only with their
 * own name.
 */
export const FORCE_RELEASE_ANNOTATION = 'simlock.dev/force-release-by';
/** The RBAC verb on `leaserequests` that force release needs. */
export const FORCE_RELEASE_VERB = 'force-release';

/** The proxy writes a lease's activity at most once per this, per lease. */
export const ACTIVITY_WRITE_INTERVAL_MS = 30_000;
/**
 * A running exec's activity record says "running until" this far ahead; the proxy renews it every
 * ACTIVITY_WRITE_INTERVAL_MS while the exec runs, so a lease is never idle while one runs.
 */
export const ACTIVITY_RUNNING_HORIZON_MS = 45_000;

/** Default of the controller's --max-lease-duration and the chart's controller.maxLeaseDuration. */
export const DEFAULT_MAX_LEASE_SECONDS = 86_400;
/** Default of the controller's --expiring-soon-before: the warning this long before expiry. */
export const DEFAULT_EXPIRING_SOON_SECONDS = 300;

/** Reasons of the Released condition and Events for the lifetime rules. */
export const LIFETIME_REASONS = {
  holderGone: 'HolderGone',
  idle: 'Idle',
  forceReleased: 'ForceReleased',
  extended: 'Extended',
  expiringSoon: 'ExpiringSoon',
} as const;

/** The condition a granted request carries while it is within the warning time of its expiry. */
export const EXPIRING_SOON_CONDITION = 'ExpiringSoon';

/**
 * Why a lease ended while a tool ran on its device, by the reason of its request's `Granted`
 * condition once released: what the exec stream's LEASE_LOST error says (the agent stops the tool
 * before it reclaims the device; the proxy reads the request for the reason).
 */
export const LEASE_END_TEXTS: Readonly<Record<string, string>> = {
  [LIFETIME_REASONS.forceReleased]: 'lease released by force',
  Expired: 'lease expired',
  [LIFETIME_REASONS.idle]: 'released for idleness',
  [LIFETIME_REASONS.holderGone]: 'holder gone',
  LeaseDeleted: 'lease deleted',
  Lost: 'lease lost by its worker',
};
/** The text when the request itself was deleted (`kubectl simlock release`, `kubectl delete`). */
export const REQUEST_DELETED_TEXT = 'request deleted';

/** How a released request's reason reads in that message (an unknown reason as it is). */
export function leaseEndText(reason: string): string {
  return LEASE_END_TEXTS[reason] ?? reason;
}

/** The LEASE_LOST message of an exec stream whose lease ended while its tool ran. */
export function leaseLostMessage(lease: string, why: string): string {
  return `lease ${lease} ended while the tool ran: ${why}; the tool was stopped`;
}
