// Starts the kind tier's first step (head-start.ts) once few cluster files are left: the tail of
// the cluster tier leaves a core mostly idle, and an earlier start would keep an idle kind node
// running beside the whole tier. Few enough: the last files take about a minute of the machine,
// about what `kind create cluster` and `docker build` take beside them.
import type { Reporter, TestModule, TestSpecification } from 'vitest/node';
import { requestHeadStart } from './head-start.js';

/** Cluster files left (queued or running) when the head start begins. */
const CLUSTER_FILES_LEFT = 16;

export default class HeadStartReporter implements Reporter {
  private left = 0;

  onTestRunStart(specifications: ReadonlyArray<TestSpecification>): void {
    this.left = specifications.filter((spec) => spec.project.name === 'cluster').length;
    this.check();
  }

  onTestModuleEnd(module: TestModule): void {
    if (module.project.name !== 'cluster') return;
    this.left -= 1;
    this.check();
  }

  private check(): void {
    if (this.left <= CLUSTER_FILES_LEFT) requestHeadStart();
  }
}
