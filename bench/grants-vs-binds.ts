// Grants against binds and the peers (DRA, KWOK, Kueue): the program is in bench/grants/ (one
// file per side, index.ts describes it and its options).
import { main } from './grants/index.js';

await main();
// Informers and the HTTPS pool may hold the loop open: the figures are out, so end.
process.exit(0);
