// Attention: what in the fleet needs a person now, each with what fixes it (the command, where one
// does), live. The rows are the pure model's (console/model/attention.ts); an operator who may patch
// Workers also gets the button that does the same as the command (Undrain, Unquarantine).
import { attentionItems, DEFAULT_ATTENTION, type AttentionItem } from '../../../model/attention.js';
import { formatDuration } from '../../../model/views.js';
import type { Abilities } from '../../../model/wire.js';
import { path, post } from '../api.js';
import { useNow } from '../hooks.js';
import { useLive, type LiveState } from '../live.js';
import { Link } from '../router.js';
import { ActionButton, Grid, RequestLink, State } from './parts.js';

/** The page's rows from what the page holds: the Attention page and the count in the header. */
export function useAttention(state: LiveState, now: number): AttentionItem[] {
  return attentionItems(
    {
      workers: state.workers.values(),
      requests: state.requests,
      leases: state.leases.values(),
      heartbeats: !(state.feed?.unwatched.includes('heartbeats') ?? false),
    },
    state.attention ?? DEFAULT_ATTENTION,
    now,
  );
}

/** The header's link, with how many things wait for a person. */
export function AttentionLink() {
  const urgent = useAttention(useLive(), useNow()).filter((item) => item.urgent).length;
  return (
    <Link href="/attention">
      Attention
      {urgent > 0 ? (
        <span className="count" aria-label={`: ${urgent} waiting for a person`}>
          {' '}
          {urgent}
        </span>
      ) : null}
    </Link>
  );
}

export function AttentionPage({ abilities }: { abilities: Abilities }) {
  const state = useLive();
  const now = useNow();
  const items = useAttention(state, now);
  const settings = state.attention ?? DEFAULT_ATTENTION;
  const urgent = items.filter((item) => item.urgent).length;
  return (
    <section aria-labelledby="attention-title">
      <h1 id="attention-title">Attention</h1>
      <p className="sub">
        What needs a person now, each with what fixes it: workers not connected, with the wrong
        protocol, unhealthy or not ready, drained over{' '}
        {formatDuration(settings.drainedOverSeconds * 1000)} or at their RAM budget; quarantined
        devices; requests waiting over {formatDuration(settings.waitingOverSeconds * 1000)}; leases
        expiring soon or near the maximum lease duration (
        {formatDuration(settings.maxLeaseSeconds * 1000)}).
      </p>
      {!abilities.seeWorkers ? (
        <p role="note">You may not list Workers: the fleet&apos;s problems are not shown to you.</p>
      ) : null}
      {state.feed?.unwatched.includes('heartbeats') ? (
        <p role="note">Heartbeats are not watched: workers not connected are not listed.</p>
      ) : null}
      {items.length === 0 ? (
        <p role="status" id="attention-none">
          <State tone="good" text="Nothing needs attention." />
        </p>
      ) : null}
      <Grid
        id="attention"
        describedBy="attention-title"
        caption={
          <>
            {items.length} {items.length === 1 ? 'thing' : 'things'}, {urgent} waiting for a person
          </>
        }
        columns={['What', 'Who', 'Detail', 'Fix', 'Actions']}
      >
        {items.map((item) => (
          <tr key={item.key} data-attention={item.key} data-kind={item.kind}>
            <th scope="row">
              <State tone={item.urgent ? 'bad' : 'warn'} text={item.title} />
              {item.urgent ? null : <div className="sub">may end by itself</div>}
            </th>
            <td>{item.request ? <RequestLink request={item.request} /> : item.subject}</td>
            <td>{item.detail}</td>
            <td className="fix">
              {item.fix}
              {item.command ? (
                <div>
                  <code>{item.command}</code>
                </div>
              ) : null}
            </td>
            <td>{actionOf(item, abilities)}</td>
          </tr>
        ))}
      </Grid>
    </section>
  );
}

/** The button that does what the row's command does, for those who may. */
function actionOf(item: AttentionItem, abilities: Abilities) {
  if (!abilities.drainWorkers || item.worker === undefined) return null;
  const worker = item.worker;
  if (item.kind === 'quarantined' && item.device !== undefined) {
    const device = item.device;
    return (
      <ActionButton
        label="Unquarantine"
        describe={`Unquarantine ${item.subject}`}
        run={() => post(`/api/workers/${path(worker)}/devices/${path(device)}/unquarantine`)}
      />
    );
  }
  if (item.kind === 'drained')
    return (
      <ActionButton
        label="Undrain"
        describe={`Undrain ${item.subject}`}
        run={() => post(`/api/workers/${path(worker)}/undrain`)}
      />
    );
  return null;
}
