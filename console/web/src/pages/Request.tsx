// A request's page: what it asks for, where it stands, why it waits, and its Events as a
// timeline of what changed and when.
import { PLATFORM_NAMES } from '../../../../api/index.js';
import { describeSpec, stageSummary, workerTitle } from '../../../model/views.js';
import { useLive } from '../live.js';
import { Link } from '../router.js';
import { Inspector, useFocus } from './Inspector.js';

export function RequestPage({ namespace, name }: { namespace: string; name: string }) {
  const { requests, details, workers } = useLive();
  const key = `${namespace}/${name}`;
  useFocus([key]);
  const request = requests.get(key);
  const detail = details.get(key);
  if (!request) {
    return (
      <section>
        <h1>Request {name}</h1>
        <p role="note">
          No request {name} in {namespace} that you may see (it may have been released).{' '}
          <Link href="/requests">All requests</Link>
        </p>
      </section>
    );
  }
  const { spec } = request;
  const worker = request.worker ? workers.get(request.worker) : undefined;
  const waiting = ['Pending', 'Waiting', 'Dispatched', undefined].includes(request.phase);
  return (
    <section aria-labelledby="request-title">
      <h1 id="request-title">
        Request {request.name} <span className="sub">in {request.namespace}</span>
      </h1>
      <div className="columns">
        <dl>
          <dt>Asks for</dt>
          <dd>{describeSpec(spec)}</dd>
          <dt>Holder</dt>
          <dd>{spec.holder ?? '—'}</dd>
          <dt>May wait</dt>
          <dd>{spec.noWait ? 'no' : `${spec.waitTimeoutSeconds} s`}</dd>
          <dt>Lease duration</dt>
          <dd>{spec.durationSeconds} s</dd>
          {spec.requires?.length ? (
            <>
              <dt>Requires</dt>
              <dd>{spec.requires.join(', ')}</dd>
            </>
          ) : null}
        </dl>
        <dl id="request-status">
          <dt>Phase</dt>
          <dd>{request.phase ?? 'Pending'}</dd>
          {request.position !== undefined ? (
            <>
              <dt>Queue position</dt>
              <dd>{request.position}</dd>
            </>
          ) : null}
          {request.progress ? (
            <>
              <dt>Stage</dt>
              <dd data-stage={request.progress.stage}>{stageSummary(request.progress)}</dd>
            </>
          ) : null}
          {request.worker ? (
            <>
              <dt>Worker</dt>
              <dd>{worker ? workerTitle(worker) : request.worker}</dd>
            </>
          ) : null}
          {request.device ? (
            <>
              <dt>Device</dt>
              <dd>
                {request.device.name}, {PLATFORM_NAMES[request.device.platform]} {request.device.os}
              </dd>
            </>
          ) : null}
          {request.error ? (
            <>
              <dt>Error</dt>
              <dd>
                <code>{request.error.code}</code> {request.error.message}
              </dd>
            </>
          ) : null}
        </dl>
      </div>
      {waiting ? <Inspector request={request} /> : null}
      <section aria-labelledby="events-title">
        <h2 id="events-title">Events</h2>
        <p className="sub">
          <Link href={`/events?request=${encodeURIComponent(key)}`}>
            On the Events page, with other requests&apos; too
          </Link>
        </p>
        {detail && !detail.eventsVisible ? (
          <p role="note">You may not read Events in {namespace}.</p>
        ) : (
          <ol className="timeline" id="events">
            {(detail?.events ?? []).map((event, index) => (
              <li key={`${event.firstAt ?? ''}-${index}`}>
                <time dateTime={event.firstAt}>
                  {event.firstAt ? new Date(event.firstAt).toLocaleTimeString() : '—'}
                </time>{' '}
                <strong>{event.reason}</strong>
                {event.type === 'Warning' ? ' (warning)' : ''}: {event.message}
                {event.count > 1 ? ` ×${event.count}` : ''}
              </li>
            ))}
          </ol>
        )}
      </section>
    </section>
  );
}
