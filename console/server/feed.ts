// How current the console's view of the cluster is, watch by watch: syncing until its first list,
// failing from an error until it lists again, else live. The page says Live only when every watch
// is; a watch that fails (the API server out of reach, access taken away) is named with its error
// instead, so a page never claims to be up to date while it is not.
import type { Feed, WatchProblem } from '../model/wire.js';

const MAX_ERROR_LENGTH = 1024;

type WatchState = { state: 'syncing' } | { state: 'live' } | ({ state: 'failing' } & WatchProblem);

/** One watch's reports: it listed, or it failed. */
export interface WatchReports {
  listed(): void;
  failed(error: unknown): void;
  /** Resolves at the first list or the first failure, whichever comes first. */
  readonly settled: Promise<void>;
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, MAX_ERROR_LENGTH);
}

export class FeedState {
  private readonly watches = new Map<string, WatchState>();

  constructor(
    private readonly scope: Pick<Feed, 'hidden' | 'unwatched'> & { namespace: string | undefined },
    private readonly onChange: () => void,
  ) {}

  /** A watch of `what` ("Leases in team-a"), syncing until it reports. */
  watch(what: string): WatchReports {
    this.watches.set(what, { state: 'syncing' });
    let settle: () => void = () => undefined;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    const set = (next: WatchState) => {
      const previous = this.watches.get(what);
      this.watches.set(what, next);
      settle();
      if (JSON.stringify(previous) !== JSON.stringify(next)) this.onChange();
    };
    return {
      listed: () => set({ state: 'live' }),
      failed: (error) => {
        const previous = this.watches.get(what);
        const since = previous?.state === 'failing' ? previous.since : new Date().toISOString();
        set({ state: 'failing', what, error: messageOf(error), since });
      },
      settled,
    };
  }

  feed(): Feed {
    const syncing: string[] = [];
    const failing: WatchProblem[] = [];
    for (const [what, watch] of this.watches) {
      if (watch.state === 'syncing') syncing.push(what);
      else if (watch.state === 'failing')
        failing.push({ what, error: watch.error, since: watch.since });
    }
    return {
      ...(this.scope.namespace !== undefined ? { namespace: this.scope.namespace } : {}),
      hidden: this.scope.hidden,
      unwatched: this.scope.unwatched,
      syncing,
      failing,
    };
  }
}
