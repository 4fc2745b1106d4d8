// A small typed event source: the agent's pieces tell their owner about changes through these, so
// the Kubernetes wiring can subscribe without the pieces knowing about it.

export type Unsubscribe = () => void;

export class Listeners<T> {
  #listeners = new Set<(value: T) => void>();

  add(listener: (value: T) => void): Unsubscribe {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  emit(value: T): void {
    for (const listener of [...this.#listeners]) listener(value);
  }
}

/** Runs async sections one at a time, in call order: the agent's grant decisions go through one. */
export class Serializer {
  #tail: Promise<unknown> = Promise.resolve();

  run<T>(section: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(section, section);
    // The next section waits for this one whether it succeeds or fails.
    this.#tail = result.catch(() => undefined);
    return result;
  }
}
