// A router of seven pages on the History API: no library needed for /fleet, /requests,
// /requests/<namespace>/<name>, /leases, /attention, /events (its filter in the query) and /usage.
import { useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from 'react';

const listeners = new Set<() => void>();
window.addEventListener('popstate', () => listeners.forEach((listener) => listener()));

export function navigate(to: string): void {
  window.history.pushState(null, '', to);
  listeners.forEach((listener) => listener());
}

export function usePath(): string {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => window.location.pathname,
  );
}

export function Link(props: AnchorHTMLAttributes<HTMLAnchorElement> & { href: string }) {
  const current = usePath();
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    // Let the browser open new tabs and windows as it would.
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    navigate(props.href);
  };
  return (
    <a {...props} onClick={onClick} aria-current={current === props.href ? 'page' : undefined} />
  );
}
