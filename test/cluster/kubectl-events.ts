// An object's Events as a person reads them: `kubectl get events` with a field selector on it.
import type { ClusterTestContext, CommandResult } from './harness.js';

/** `kubectl get events -n NAMESPACE --field-selector involvedObject.name=NAME`, as the admin. */
export function kubectlEventsOf(
  cluster: Pick<ClusterTestContext, 'kubectl'>,
  namespace: string,
  name: string,
): Promise<CommandResult> {
  return cluster.kubectl([
    ...['get', 'events', '-n', namespace],
    ...['--field-selector', `involvedObject.name=${name}`],
  ]);
}
