// The simlock console: a web page of the fleet and of why each request waits, live. Its server
// watches the cluster once and fans changes out to every open page; console/web is the page.
export { startConsole, type ConsoleOptions, type RunningConsole } from './server/server.js';
export { ensureConsoleBuilt, WEB_ROOT } from './server/build.js';
export * from './model/wire.js';
export * from './model/views.js';
