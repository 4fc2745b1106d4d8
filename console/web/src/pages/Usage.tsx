// Usage: the last hour and the last day of waits and utilisation, from the controller's own
// history (the ConfigMap simlock-usage, ADR 0027), so a team without Prometheus sees them too; and
// one line on the class whose requests waited longest. The figures are the pure model's
// (console/model/usage.ts). The history changes once a minute; the page reads it every 30 s.
import { useEffect, useState } from 'react';
import { UsageHistoryDocument } from '../../../../api/index.js';
import {
  classWaits,
  className,
  formatWait,
  longestWaitLine,
  pointStarts,
  utilisationSeries,
  waitPoints,
  type UsageWindow,
} from '../../../model/usage.js';
import { formatDuration } from '../../../model/views.js';
import { failureOf } from '../api.js';
import { useNow } from '../hooks.js';
import { LineChart } from './LineChart.js';
import { Grid } from './parts.js';

const READ_EVERY_MS = 30_000;

type Loaded =
  | { state: 'loading' }
  | { state: 'failed'; message: string }
  | { state: 'loaded'; document: UsageHistoryDocument };

function useUsage(): Loaded {
  const [loaded, setLoaded] = useState<Loaded>({ state: 'loading' });
  useEffect(() => {
    let stopped = false;
    const read = async () => {
      const response = await fetch('/api/usage');
      if (!response.ok) {
        const failure = await failureOf(response);
        return setLoaded({ state: 'failed', message: `${failure.code}: ${failure.message}` });
      }
      const document = UsageHistoryDocument.safeParse(await response.json());
      setLoaded(
        document.success
          ? { state: 'loaded', document: document.data }
          : { state: 'failed', message: 'the console sent a usage history this page cannot read' },
      );
    };
    const tick = () => {
      if (!stopped)
        void read().catch((error: unknown) =>
          setLoaded({ state: 'failed', message: String(error) }),
        );
    };
    tick();
    const timer = setInterval(tick, READ_EVERY_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, []);
  return loaded;
}

/** A round top for the waits' axis: 10 s, 30 s, 1 m, 5 m, … */
function waitAxisTop(seconds: number): number {
  return [10, 30, 60, 300, 600, 1800, 3600, 7200, 14_400].find((top) => seconds <= top) ?? seconds;
}

function Window({
  window,
  document,
  now,
}: {
  window: UsageWindow;
  document: UsageHistoryDocument;
  now: number;
}) {
  const title = window === 'hour' ? 'Last hour' : 'Last day';
  const step = window === 'hour' ? 'per 5 minutes' : 'per hour';
  const times = pointStarts(window, now);
  const waits = waitPoints(document, window, now);
  const utilisation = utilisationSeries(document, window, now);
  const classes = classWaits(document, window, now);
  const top = waitAxisTop(Math.max(0, ...waits.map((point) => point.p90 ?? 0)));
  return (
    <section aria-labelledby={`usage-${window}`} id={`usage-${window}-section`}>
      <h2 id={`usage-${window}`}>{title}</h2>
      <div className="charts">
        <LineChart
          id={`waits-${window}`}
          title={`Waits of granted requests, all classes, ${step}`}
          times={times}
          yMax={top}
          formatY={formatWait}
          series={[
            { name: 'median', values: waits.map((point) => point.median) },
            { name: 'p90', values: waits.map((point) => point.p90) },
          ]}
        />
        <LineChart
          id={`utilisation-${window}`}
          title={`Devices leased, share of those available, ${step}`}
          times={times}
          yMax={1}
          formatY={(ratio) => `${Math.round(ratio * 100)}%`}
          series={utilisation.map((series) => ({
            name: series.model,
            values: series.points.map((point) => point.ratio),
          }))}
        />
      </div>
      {classes.length > 0 ? (
        <Grid
          id={`classes-${window}`}
          caption={`Waits by what was asked for, ${title.toLowerCase()}`}
          columns={['Asked for', 'Granted', 'Waited in total', 'Median', 'p90']}
        >
          {classes.map((one) => (
            <tr key={`${one.platform}/${one.model}`}>
              <th scope="row">{className(one)}</th>
              <td>{one.count}</td>
              <td>{formatWait(one.totalSeconds)}</td>
              <td>{formatWait(one.median)}</td>
              <td>{formatWait(one.p90)}</td>
            </tr>
          ))}
        </Grid>
      ) : (
        <p className="sub">
          No request was granted {window === 'hour' ? 'in the last hour' : 'in the last day'}.
        </p>
      )}
    </section>
  );
}

export function UsagePage() {
  const loaded = useUsage();
  const now = useNow(10_000);
  return (
    <section aria-labelledby="usage-page-title">
      <h1 id="usage-page-title">Usage</h1>
      {loaded.state === 'loading' ? <p className="loading">Loading…</p> : null}
      {loaded.state === 'failed' ? (
        <p role="alert">The usage history cannot be shown: {loaded.message}</p>
      ) : null}
      {loaded.state === 'loaded' ? (
        <>
          <p id="usage-summary" className="summary">
            {longestWaitLine(loaded.document, now)}
          </p>
          <p className="sub">
            From the controller&apos;s own history, written{' '}
            {formatDuration(now - Date.parse(loaded.document.updatedAt))} ago; waits are counted
            when a request is granted, so a request still waiting is not in them yet.
            {Date.parse(loaded.document.since) > now - 86_400_000 + 60_000
              ? ` Kept since ${new Date(loaded.document.since).toLocaleString()}.`
              : null}
          </p>
          <Window window="hour" document={loaded.document} now={now} />
          <Window window="day" document={loaded.document} now={now} />
        </>
      ) : null}
    </section>
  );
}
