// A benchmark stopped with Ctrl-C (or failing) must not leave etcd, kube-apiserver or agents
// running on a shared machine: what it starts registers its cleanup here, and SIGINT or SIGTERM runs
// them all before the program exits (a second signal exits at once).

const cleanups = new Set<() => Promise<void>>();

/** Runs `cleanup` when the program is interrupted; the answer unregisters it. */
export function onInterrupt(cleanup: () => Promise<void>): () => void {
  cleanups.add(cleanup);
  return () => cleanups.delete(cleanup);
}

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    process.stderr.write(`${signal}: stopping what the benchmark started\n`);
    void Promise.allSettled([...cleanups].map((cleanup) => cleanup())).then(() =>
      process.exit(130),
    );
  });
}
