// A benchmark stopped with Ctrl-C (or failing) must not leave etcd, kube-apiserver or agents
// running on a shared machine: what it starts registers its cleanup here, and SIGINT or SIGTERM runs
// them all before the program exits (a second signal exits at once). The handlers are installed
// with the first cleanup, so a module that only imports the harness (a unit test) gets none.

const cleanups = new Set<() => Promise<void>>();

/** Runs `cleanup` when the program is interrupted; the answer unregisters it. */
export function onInterrupt(cleanup: () => Promise<void>): () => void {
  installHandlers();
  cleanups.add(cleanup);
  return () => cleanups.delete(cleanup);
}

let installed = false;
let interrupted = false;

function installHandlers(): void {
  if (installed) return;
  installed = true;
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
}
