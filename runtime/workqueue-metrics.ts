// The work queues' Prometheus metrics, one set per registry: how many keys wait (by queue), how
// many retries were made (by queue), and how many reconciles failed (by kind of object).
import { Counter, Gauge, type Registry } from 'prom-client';
import type { WorkQueueObserver } from './workqueue.js';

export interface WorkQueueMetrics {
  /** The observer for the queue that works on objects of `kind` (LeaseRequest, Lease, ...). */
  observer(kind: string): WorkQueueObserver;
}

export function workQueueMetrics(registry: Registry): WorkQueueMetrics {
  const depth = new Gauge({
    name: 'simlock_workqueue_depth',
    help: 'Keys ready in a work queue and not yet taken.',
    labelNames: ['queue'],
    registers: [registry],
  });
  const retries = new Counter({
    name: 'simlock_workqueue_retries_total',
    help: 'Keys added again after a failure, with backoff.',
    labelNames: ['queue'],
    registers: [registry],
  });
  const errors = new Counter({
    name: 'simlock_reconcile_errors_total',
    help: 'Reconciles (or writes) that failed and were retried, by kind of object.',
    labelNames: ['kind'],
    registers: [registry],
  });
  return {
    observer: (kind) => ({
      depth: (queue, value) => depth.set({ queue }, value),
      retried: (queue) => retries.inc({ queue }),
      failed: () => errors.inc({ kind }),
    }),
  };
}
