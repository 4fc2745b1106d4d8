// Requests: the waiting ones in queue order with the Waiting inspector of the one selected, the
// requests waiting in agents' own queues, and the recent outcomes (failed, granted).
import { useState } from 'react';
import { grantEstimateText, PLATFORM_NAMES } from '../../../../api/index.js';
import {
  ageOf,
  describeSpec,
  formatDuration,
  settledRequests,
  stageSummary,
  waitingRequests,
  workerTitle,
} from '../../../model/views.js';
import { objectKeyOf, type Abilities, type WorkerView } from '../../../model/wire.js';
import { useNow } from '../hooks.js';
import { useLive } from '../live.js';
import { Link } from '../router.js';
import { Inspector, useFocus } from './Inspector.js';
import { Grid, RequestLink, queueEntryText } from './parts.js';

/** Outcomes listed at most; the page is about what waits. */
const MAX_SETTLED = 50;

function FleetSummary({
  workers,
  abilities,
}: {
  workers: ReadonlyMap<string, WorkerView>;
  abilities: Abilities;
}) {
  if (!abilities.seeWorkers)
    return <p id="fleet-summary">Fleet: not shown to you (you may not list Workers)</p>;
  const counts = { running: 0, starting: 0, unhealthy: 0, drained: 0 };
  for (const worker of workers.values()) {
    counts[worker.health ?? 'starting'] += 1;
    if (worker.drained) counts.drained += 1;
  }
  return (
    <p id="fleet-summary">
      Fleet: {workers.size} workers — {counts.running} running, {counts.starting} starting,{' '}
      {counts.unhealthy} unhealthy, {counts.drained} drained
    </p>
  );
}

export function RequestsPage({ abilities }: { abilities: Abilities }) {
  const { requests, workers } = useLive();
  const now = useNow();
  const [selected, setSelected] = useState<string | undefined>(undefined);
  const waiting = waitingRequests(requests.values());
  const chosen =
    waiting.find((request) => objectKeyOf(request) === selected) ?? waiting[0] ?? undefined;
  useFocus(chosen ? [objectKeyOf(chosen)] : []);
  const local = [...workers.values()].flatMap((worker) =>
    worker.queue.map((entry) => ({ worker, entry })),
  );
  const failed = settledRequests(requests.values(), 'Failed').slice(0, MAX_SETTLED);
  const granted = settledRequests(requests.values(), 'Granted').slice(0, MAX_SETTLED);
  return (
    <section aria-labelledby="requests-title">
      <h1 id="requests-title">Requests</h1>
      <FleetSummary workers={workers} abilities={abilities} />
      <Grid
        id="waiting"
        caption={<>{waiting.length} waiting, in queue order</>}
        columns={['Position', 'Request', 'Age', 'Holder', 'Asks for', 'Phase', 'Why']}
      >
        {waiting.map((request) => {
          const key = objectKeyOf(request);
          const isChosen = chosen !== undefined && key === objectKeyOf(chosen);
          return (
            <tr key={key} data-request={key} data-selected={isChosen ? 'true' : undefined}>
              <td>{request.position ?? '—'}</td>
              <th scope="row">
                <RequestLink request={request} />
                <div className="sub">{request.namespace}</div>
              </th>
              <td>{formatDuration(ageOf(request.queuedAt ?? request.createdAt, now) ?? 0)}</td>
              <td>{request.spec.holder ?? '—'}</td>
              <td>{describeSpec(request.spec)}</td>
              <td>
                {request.phase ?? 'Pending'}
                {request.progress ? (
                  <div className="sub" data-stage={request.progress.stage}>
                    {stageSummary(request.progress)}
                  </div>
                ) : null}
                {request.estimate ? (
                  <div className="sub" data-estimate={request.estimate.grantAt ?? 'none'}>
                    {grantEstimateText(request.estimate, now)}
                  </div>
                ) : null}
              </td>
              <td>
                <button type="button" aria-pressed={isChosen} onClick={() => setSelected(key)}>
                  Inspect
                </button>{' '}
                {request.summary ?? ''}
              </td>
            </tr>
          );
        })}
      </Grid>
      {chosen ? <Inspector request={chosen} /> : null}

      <Grid
        id="local-requests"
        caption={<>{local.length} waiting in workers&apos; own queues</>}
        columns={['Request', 'Worker', 'Holder', 'Asks for', 'Why it waits']}
      >
        {local.map(({ worker, entry }) => (
          <tr key={`${worker.name}/${entry.id}`} data-local={entry.id}>
            <th scope="row">{entry.id}</th>
            <td>{workerTitle(worker)}</td>
            <td>{entry.holder ?? '—'}</td>
            <td>
              {PLATFORM_NAMES[entry.platform]} {entry.model ?? ''}
            </td>
            <td>{queueEntryText(entry)}</td>
          </tr>
        ))}
      </Grid>

      <Grid
        id="failed-requests"
        caption={<>Failed ({failed.length})</>}
        columns={['Request', 'Code', 'Message']}
      >
        {failed.map((request) => (
          <tr key={objectKeyOf(request)} data-request={objectKeyOf(request)}>
            <th scope="row">
              <RequestLink request={request} />
            </th>
            <td>
              <code>{request.error?.code ?? '—'}</code>
            </td>
            <td>{request.error?.message ?? ''}</td>
          </tr>
        ))}
      </Grid>

      <Grid
        id="granted-requests"
        caption={<>Granted ({granted.length})</>}
        columns={['Request', 'Lease', 'Worker', 'Device']}
      >
        {granted.map((request) => {
          const worker = request.worker ? workers.get(request.worker) : undefined;
          return (
            <tr key={objectKeyOf(request)} data-request={objectKeyOf(request)}>
              <th scope="row">
                <RequestLink request={request} />
              </th>
              <td>
                {/* The lease as its holder knows it: its Lease is named by the request's UID. */}
                <Link href="/leases">{request.name}</Link>
              </td>
              <td>{worker ? workerTitle(worker) : (request.worker ?? '—')}</td>
              <td>
                {request.device
                  ? `${request.device.name} (${PLATFORM_NAMES[request.device.platform]} ${request.device.os})`
                  : '—'}
              </td>
            </tr>
          );
        })}
      </Grid>
    </section>
  );
}
