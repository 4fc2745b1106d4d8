// The Waiting inspector: one row per worker of a waiting request, named by the worker's label (its
// raw name when this person cannot see Workers), with the reason's text from the contract; then
// what would unblock it (sent with the request's detail when this person may see Workers).
import { useEffect } from 'react';
import { grantEstimateText } from '../../../../api/index.js';
import { inspectorRows } from '../../../model/views.js';
import { objectKeyOf, type RequestView } from '../../../model/wire.js';
import { useNow } from '../hooks.js';
import { live, useLive } from '../live.js';
import { Grid } from './parts.js';

export function useFocus(keys: string[]): void {
  const joined = keys.join('\n');
  useEffect(() => {
    live.focus(joined.length === 0 ? [] : joined.split('\n'));
  }, [joined]);
}

export function Inspector({ request }: { request: RequestView }) {
  const { details, workers } = useLive();
  const detail = details.get(objectKeyOf(request));
  const rows = detail ? inspectorRows(detail.workers, request.spec.platform, workers) : undefined;
  const now = useNow();
  return (
    <section aria-labelledby="inspector-title" className="inspector">
      <h2 id="inspector-title">Why {request.name} waits</h2>
      {request.estimate ? (
        <p data-estimate={request.estimate.grantAt ?? 'none'}>
          Estimate: {grantEstimateText(request.estimate, now)}
        </p>
      ) : null}
      {rows === undefined ? (
        <p>Reading its reasons…</p>
      ) : rows.length === 0 ? (
        <p>No worker has been asked yet ({request.phase ?? 'Pending'}).</p>
      ) : (
        <Grid
          id="inspector"
          caption={
            <>
              Waiting inspector: one row per worker{request.summary ? ` (${request.summary})` : ''}
            </>
          }
          columns={['Worker', 'Reason']}
        >
          {rows.map((row) => (
            <tr key={row.worker} data-worker={row.worker}>
              <th scope="row">{row.title}</th>
              <td>{row.text}</td>
            </tr>
          ))}
        </Grid>
      )}
      {detail?.unblock !== undefined && detail.unblock.length > 0 ? (
        <>
          <h3 id="unblock-title">What would unblock it</h3>
          {/* The few smallest changes, cheapest first, as `kubectl simlock why` finds them. */}
          <ul id="unblock" aria-labelledby="unblock-title">
            {detail.unblock.map((line) => (
              <li key={line}>{line}</li>
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
}
