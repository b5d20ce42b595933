/**
 * Issue 34's fault matrix, the cells CI runs (the machinery and the checks: ./_fault-matrix.ts;
 * which cells: `ciCell` below). Every other cell — a real SIGKILL at every stage on both stores,
 * every stage on PostgreSQL, a silo gone at every stage — is in ./fault-matrix.slow.test.ts
 * (`npm run test:slow`).
 */
import { ciCell, faultMatrix } from './_fault-matrix.js';

faultMatrix(ciCell);
