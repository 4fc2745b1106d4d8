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
