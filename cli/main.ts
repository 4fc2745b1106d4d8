// kubectl-simlock: the process. bin/kubectl-simlock runs it from its bundle (bin/launch.mjs); the
// release's single binary runs it as a CommonJS bundle (tools/release/plugin-binary.ts), which has
// no top-level await: hence the promise chain.
import { hideBin } from 'yargs/helpers';
import { runCli } from './app.js';
import { processIO } from './io.js';

void runCli(hideBin(process.argv), processIO()).then((exitCode) => {
  // Exit once stdout and stderr are flushed: pipes are asynchronous on macOS, and a watch or a
  // keep-alive socket must not hold the process open.
  process.stdout.write('', () => process.stderr.write('', () => process.exit(exitCode)));
});
