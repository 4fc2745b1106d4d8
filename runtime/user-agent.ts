// Who is asking, as a client tells kube-apiserver: `simlock-controller/0.1.0 (linux/x64) node/v24.…`,
// in client-go's manner. The API server names the field manager of each write by the part before
// the first `/` (`kubectl get --show-managed-fields` then says which of simlock's parts wrote a
// field, not "unknown"), and its audit log records the whole.
import { SIMLOCK_VERSION } from '../api/index.js';

export function userAgent(component: string): string {
  return `${component}/${SIMLOCK_VERSION} (${process.platform}/${process.arch}) node/${process.version}`;
}
