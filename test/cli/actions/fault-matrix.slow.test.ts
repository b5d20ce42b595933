/**
 * Issue 34's fault matrix, the cells CI leaves out (./fault-matrix.test.ts runs the others; the
 * machinery and the checks: ./_fault-matrix.ts): a real SIGKILL of the service's process at
 * advertise, share, consistency, reporting and scoring on SQLite and on PostgreSQL (DATABASE_URL),
 * the service lost in process at every stage on PostgreSQL and at share, mask, consistency and
 * unmask on SQLite, a silo gone at advertise, share, consistency and reporting, and a silo's own
 * process SIGKILLed at every stage but unmasking on SQLite and at every stage on PostgreSQL.
 */
import { ciCell, faultMatrix } from './_fault-matrix.js';

faultMatrix((c) => !ciCell(c));
