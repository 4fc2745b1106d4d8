// The operators' unquarantine requests: the agent watches its own Worker and, for each entry of
// spec.unquarantine ({device, at}, written by `kubectl simlock device unquarantine` or the
// console), ends the quarantine of that device if it began before `at` (quarantine-retrier.ts).
// Entries stay on the Worker; one already acted on ends nothing more, since a later quarantine
// began after it. Every update of the Worker (its status writes too) is read again: cheap, as
// only a device quarantined here costs more than a map lookup.
import { z } from 'zod';
import { WorkerSpec } from '../../api/index.js';
import { Informer, simlockPath, type KubeClient, type Logger } from '../../runtime/index.js';
import type { AgentCore } from '../core.js';

const UnquarantineSpec = z.object({
  spec: z.object({ unquarantine: WorkerSpec.shape.unquarantine }).optional(),
});

export class UnquarantineWatch {
  readonly #informer: Informer;

  constructor(
    client: KubeClient,
    private readonly options: { worker: string; core: AgentCore; log: Logger },
  ) {
    this.#informer = new Informer(client, {
      path: simlockPath('worker'),
      fieldSelector: `metadata.name=${options.worker}`,
      onError: (error) => options.log.warn('worker watch restarting', { error }),
    });
    this.#informer.on((event) => {
      if (event.type !== 'deleted') this.#read(event.object);
    });
  }

  start(): void {
    this.#informer.start();
  }

  async stop(): Promise<void> {
    await this.#informer.stop();
  }

  #read(object: unknown): void {
    const parsed = UnquarantineSpec.safeParse(object);
    if (!parsed.success) {
      this.options.log.warn('the Worker spec.unquarantine is unreadable; ignored', {
        error: parsed.error.message,
      });
      return;
    }
    for (const entry of parsed.data.spec?.unquarantine ?? []) {
      void this.options.core.unquarantine(entry.device, Date.parse(entry.at)).then((outcome) => {
        if (outcome !== 'not-quarantined') {
          this.options.log.info('unquarantine asked by an operator', {
            device: entry.device,
            at: entry.at,
            outcome,
          });
        }
      });
    }
  }
}
