// kube-apiserver's audit log of writes to some resources, at the Metadata level (who wrote what,
// when, and the answer's code): for benchmarks that must find out which process made a write.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Writes the audit policy into `dir` and answers the flags that turn the log on. */
export async function auditArgs(
  dir: string,
  audit: { path: string; resources: string[] },
): Promise<string[]> {
  const policyPath = join(dir, 'audit-policy.yaml');
  const rules = audit.resources.map((name) => {
    const [group = '', resource = ''] = name.split('/');
    return `- level: Metadata\n  verbs: [create, update, patch, delete]\n  resources:\n  - group: "${group}"\n    resources: ["${resource}", "${resource}/status"]`;
  });
  await writeFile(
    policyPath,
    `apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n${rules.join('\n')}\n- level: None\n`,
  );
  return [
    `--audit-policy-file=${policyPath}`,
    `--audit-log-path=${audit.path}`,
    '--audit-log-format=json',
  ];
}
