// Small pieces the pages share: a table with its caption and column names, a link to a request's
// page, a state said in words with a glyph (never colour alone), an action button that shows its
// refusal, and the reason text of an agent's own queue entry.
import { useState, type ReactNode } from 'react';
import { reasonText, type AgentQueueEntry } from '../../../../api/index.js';
import { ConsoleCallError } from '../api.js';
import { Link } from '../router.js';

/** A table of the console: a caption, a header row of column names, then the rows given. */
export function Grid(props: {
  caption: ReactNode;
  columns: readonly string[];
  children: ReactNode;
  id?: string;
  /** A table inside a row of another (a worker's devices and queue). */
  inner?: boolean;
  describedBy?: string;
}) {
  return (
    <table
      className={props.inner ? 'grid inner' : 'grid'}
      id={props.id}
      aria-describedby={props.describedBy}
    >
      <caption>{props.caption}</caption>
      <thead>
        <tr>
          {props.columns.map((column) => (
            <th scope="col" key={column}>
              {column}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>{props.children}</tbody>
    </table>
  );
}

/** The request's name, linking to its page. */
export function RequestLink({ request }: { request: { namespace: string; name: string } }) {
  return (
    <Link
      href={`/requests/${encodeURIComponent(request.namespace)}/${encodeURIComponent(request.name)}`}
    >
      {request.name}
    </Link>
  );
}

export function State(props: { tone: 'good' | 'warn' | 'bad' | 'idle'; text: string }) {
  const glyph = { good: '✓', warn: '!', bad: '✕', idle: '–' }[props.tone];
  return (
    <span className={`state ${props.tone}`}>
      <span aria-hidden="true">{glyph} </span>
      {props.text}
    </span>
  );
}

/** A button that runs an action and says why it was refused, with the code and the message. */
export function ActionButton(props: {
  label: string;
  run: () => Promise<void>;
  describe?: string;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const click = () => {
    setBusy(true);
    setError(undefined);
    props
      .run()
      .catch((failure: unknown) =>
        setError(
          failure instanceof ConsoleCallError
            ? `${failure.code}: ${failure.message}`
            : String(failure),
        ),
      )
      .finally(() => setBusy(false));
  };
  return (
    <>
      <button type="button" onClick={click} disabled={busy} aria-label={props.describe}>
        {props.label}
      </button>
      {error ? (
        <span role="alert" className="error">
          {error}
        </span>
      ) : null}
    </>
  );
}

export function queueEntryText(entry: AgentQueueEntry): string {
  return reasonText(entry, entry.platform);
}
