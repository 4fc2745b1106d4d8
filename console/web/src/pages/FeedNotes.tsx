// Above every page: the console's watches that fail (the page is not up to date; each with its
// error, as the API server gave it) and what this console does not show, and why.
import { ageOf, formatDuration } from '../../../model/views.js';
import type { Feed } from '../../../model/wire.js';
import { useNow } from '../hooks.js';

export function FeedNotes({ feed }: { feed: Feed | undefined }) {
  const now = useNow();
  if (!feed) return null;
  return (
    <>
      {feed.failing.length > 0 ? (
        <div id="failing" role="alert" className="feed-failing">
          <p>Not up to date: what follows is what the console last saw. Its watches fail:</p>
          <ul>
            {feed.failing.map((problem) => (
              <li key={problem.what}>
                <strong>{problem.what}</strong> (for{' '}
                {formatDuration(ageOf(problem.since, now) ?? 0)}): {problem.error}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {feed.hidden.length > 0 ? (
        <section id="hidden" aria-label="Not shown" className="feed-hidden">
          <ul>
            {feed.hidden.map((sentence) => (
              <li key={sentence}>{sentence}</li>
            ))}
          </ul>
        </section>
      ) : null}
    </>
  );
}
