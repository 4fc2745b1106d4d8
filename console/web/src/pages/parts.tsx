// Small pieces the pages share: a state said in words with a glyph (never colour alone), an
// action button that shows its refusal, and the reason text of an agent's own queue entry.
import { useState } from 'react';
import { reasonText, type AgentQueueEntry } from '../../../../api/index.js';
import { ConsoleCallError } from '../api.js';

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
