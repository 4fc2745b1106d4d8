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
  else if (answer.stdout) process.stdout.write(answer.stdout);
  if (answer.stderr) process.stderr.write(answer.stderr);
  process.exitCode = answer.exitCode;
}, answer.delayMs);
`;
