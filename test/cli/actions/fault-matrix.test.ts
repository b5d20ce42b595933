/**
 * Issue 34's fault matrix, the cells CI runs (the machinery and the checks: ./_fault-matrix.ts;
 * which cells: its `ciCell`): the service's process SIGKILLed at masking and at unmasking on
 * SQLite and on PostgreSQL, the service lost in process at advertise, reporting and scoring, a
 * silo gone at masking and at unmasking, a silo's process SIGKILLed at unmasking on SQLite. Every
 * other cell — a real SIGKILL at the other stages,
 * the service lost in process at every stage on both stores, a silo gone at the other stages — is
 * in ./fault-matrix.slow.test.ts (`npm run test:slow`).
 */
import { ciCell, faultMatrix } from './_fault-matrix.js';

faultMatrix(ciCell);
