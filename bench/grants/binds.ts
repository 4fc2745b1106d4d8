// The ceiling: kube-scheduler binding N small pods onto W Ready, untainted Nodes.
import type { SideContext, SideResult } from './measure.js';
import { startPodStage } from './pod-stage.js';
import { runSide } from './side.js';

export async function bindsSide(context: SideContext): Promise<SideResult> {
  const stage = await startPodStage(context, {
    namespace: `pods-${context.tag}`,
    scheduler: 'kube-scheduler',
  });
  return runSide(context, {
    item: 'pod',
    create: (name) => stage.createPod(name),
    done: stage.pods.bound,
    what: 'every pod bound',
    // Ready means it binds.
    warmUp: { processes: stage.processes, what: 'binding' },
    // Events are written asynchronously, after the binding: the end of the side gives them a moment.
    keep: (key) => key.includes('pods') || key.includes('events'),
    creates: ['POST pods'],
    stop: () => stage.stop(),
  });
}
