// Events: simlock's Events on LeaseRequests (Dispatched, Provisioning, Booting, Granted, Failed,
// DeviceRecovering, Released, …) in every namespace this person may read Events of, newest first,
// live, filtered by worker, request and reason. The filter is the pure model's
// (console/model/event-filter.ts) and is kept in the address, so a filtered page can be shared.
import { useEffect, useState } from 'react';
import { eventReasons, filterEvents, type EventFilter } from '../../../model/event-filter.js';
import { workerTitle } from '../../../model/views.js';
import { live, useLive } from '../live.js';
import { Grid, RequestLink } from './parts.js';

/** Rows drawn at most; the filter narrows the rest. */
const MAX_ROWS = 500;
const FILTERS = ['worker', 'request', 'reason'] as const;

function filterFromAddress(): EventFilter {
  const query = new URLSearchParams(window.location.search);
  return Object.fromEntries(
    FILTERS.flatMap((name) => {
      const value = query.get(name);
      return value ? [[name, value]] : [];
    }),
  );
}

export function EventsPage() {
  const { events, requests, workers, feed } = useLive();
  const [filter, setFilter] = useState<EventFilter>(filterFromAddress);
  useEffect(() => live.showEvents(), []);
  useEffect(() => {
    const query = new URLSearchParams();
    for (const name of FILTERS) if (filter[name]) query.set(name, filter[name]);
    const search = query.toString();
    window.history.replaceState(null, '', `/events${search ? `?${search}` : ''}`);
  }, [filter]);
  const all = [...events.values()];
  const rows = filterEvents(all, filter, { requests, workers });
  const reasons = eventReasons(all);
  if (filter.reason && !reasons.includes(filter.reason)) reasons.push(filter.reason);
  const workerList = [...workers.values()].sort((a, b) =>
    workerTitle(a).localeCompare(workerTitle(b)),
  );
  const set = (name: (typeof FILTERS)[number], value: string) =>
    setFilter({ ...filter, [name]: value || undefined });
  return (
    <section aria-labelledby="events-page-title">
      <h1 id="events-page-title">Events</h1>
      {feed?.unwatched.includes('events') ? (
        <p role="note">The console does not watch Events: none are shown.</p>
      ) : null}
      <form className="filters" aria-label="Filter Events" onSubmit={(e) => e.preventDefault()}>
        <label>
          Worker{' '}
          <select value={filter.worker ?? ''} onChange={(e) => set('worker', e.target.value)}>
            <option value="">all</option>
            {workerList.map((worker) => (
              <option key={worker.name} value={worker.name}>
                {workerTitle(worker)}
              </option>
            ))}
          </select>
        </label>
        <label>
          Request{' '}
          <input
            type="search"
            value={filter.request ?? ''}
            placeholder="namespace/name"
            onChange={(e) => set('request', e.target.value)}
          />
        </label>
        <label>
          Reason{' '}
          <select value={filter.reason ?? ''} onChange={(e) => set('reason', e.target.value)}>
            <option value="">all</option>
            {reasons.map((reason) => (
              <option key={reason} value={reason}>
                {reason}
              </option>
            ))}
          </select>
        </label>
      </form>
      <Grid
        id="events-table"
        describedBy="events-page-title"
        caption={
          <>
            {rows.length} of {all.length} Events
            {rows.length > MAX_ROWS ? `, the newest ${MAX_ROWS} shown` : ''}
          </>
        }
        columns={['Time', 'Reason', 'Request', 'Message']}
      >
        {rows.slice(0, MAX_ROWS).map((event) => (
          <tr key={event.key} data-event={event.key} data-reason={event.reason}>
            <td>
              <time dateTime={event.lastAt ?? event.firstAt}>
                {(event.lastAt ?? event.firstAt)
                  ? new Date(event.lastAt ?? event.firstAt ?? '').toLocaleTimeString()
                  : '—'}
              </time>
            </td>
            <th scope="row">
              {event.reason}
              {event.type === 'Warning' ? <div className="sub">warning</div> : null}
            </th>
            <td>
              {requests.has(`${event.namespace}/${event.request}`) ? (
                <RequestLink request={{ namespace: event.namespace, name: event.request }} />
              ) : (
                event.request
              )}
              <div className="sub">{event.namespace}</div>
            </td>
            <td>
              {event.message}
              {event.count > 1 ? ` ×${event.count}` : ''}
            </td>
          </tr>
        ))}
      </Grid>
    </section>
  );
}
