// The kind tier's files first in the group they share with the cluster tier (vitest.config.ts):
// vitest's own order runs one project's files after another's, which would start the kind tier
// only as the cluster tier ends. Its install test is minutes of waiting on kubeadm, rollouts and
// probes, with both cores a third idle: begun first, it runs beside the cluster files instead of
// after them. Within each project the order stays vitest's (failed first, then longest first).
import { BaseSequencer, type TestSpecification } from 'vitest/node';

export default class KindFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const isKind = (spec: TestSpecification) => spec.project.name === 'kind';
    return [...sorted.filter(isKind), ...sorted.filter((spec) => !isKind(spec))];
  }
}
