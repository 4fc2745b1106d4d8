// The kubectl-simlock plugin: run it in-process (tests, e2e) and its pure formatters.
export { runCli } from './app.js';
export { RecordingIO, processIO, type CliIO } from './io.js';
export * from './format/requests.js';
export * from './format/tables.js';
export * from './format/output.js';
export * from './format/progress.js';
