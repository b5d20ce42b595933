/**
 * Issue 34's fault matrix, the cells CI leaves out (./fault-matrix.test.ts runs the others; the
 * machinery and the checks: ./_fault-matrix.ts): a real SIGKILL of the service's process at every
 * stage of a round on SQLite and on PostgreSQL (DATABASE_URL), the service lost in process at every
 * stage on PostgreSQL, and a silo gone at every stage.
 */
import { ciCell, faultMatrix } from './_fault-matrix.js';

faultMatrix((c) => !ciCell(c));
