// kubectl-simlock: the process. bin/kubectl-simlock runs this file with node and the tsx loader.
import { hideBin } from 'yargs/helpers';
import { runCli } from './app.js';
import { processIO } from './io.js';

const exitCode = await runCli(hideBin(process.argv), processIO());
// Exit once stdout and stderr are flushed: pipes are asynchronous on macOS, and a watch or a
// keep-alive socket must not hold the process open.
process.stdout.write('', () => process.stderr.write('', () => process.exit(exitCode)));
