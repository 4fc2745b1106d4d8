// The benchmarks' creates and set-ups: many items, a bounded number in flight.

/** Runs `task` over `items` with at most `limit` at once. */
export async function inParallel<T>(
  items: readonly T[],
  limit: number,
  task: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let nextIndex = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (nextIndex < items.length) {
      const index = nextIndex++;
      await task(items[index] as T, index);
    }
  });
  await Promise.all(lanes);
}
