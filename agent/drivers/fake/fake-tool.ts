// The program the fake driver's exec runs: a real child process (so the exec server streams and
// kills it for real) that prints the argv it was asked to run, then answers as scripted. It is
// passed to `node -e`: a plain .js file under agent/ would fall outside the TypeScript project.

/** argv[0] after `--` is the scripted answer as JSON; the rest is the tool's argv to print. */
export const FAKE_TOOL_SOURCE = `
const [answerJson, ...argv] = process.argv.slice(1);
const answer = JSON.parse(answerJson);
// Binary output (a screenshot) is stdout alone: the argv line goes to stderr then.
const line = 'fake-tool: ' + argv.join(' ') + '\\n';
if (answer.stdoutBase64) process.stderr.write(line);
else process.stdout.write(line);
setTimeout(() => {
  if (answer.stdoutBase64) process.stdout.write(Buffer.from(answer.stdoutBase64, 'base64'));
  else if (answer.stdout) {
    // A large output is written as the pipe drains, as a real tool's would be.
    let left = answer.stdoutRepeat ?? 1;
    const more = () => {
      while (left > 0) {
        left -= 1;
        if (!process.stdout.write(answer.stdout)) return process.stdout.once('drain', more);
      }
    };
    more();
  }
  if (answer.stderr) process.stderr.write(answer.stderr);
  process.exitCode = answer.exitCode;
}, answer.delayMs);
`;
