// Durations on the command line live in api/duration.ts (the controller's flags read them too).
export { formatDuration, parseDuration } from '../api/index.js';
