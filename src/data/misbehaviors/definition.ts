/**
 * A simulated misbehaving silo (the configuration's `attacks`; papers/000 §5, papers/002 §5,
 * papers/003 §5.4): one kind per file in this folder, listed once in ./builtin.ts (one line;
 * ./registry.ts collects them). A kind
 * declares its name, what it does (the configuration's documentation reads it), whether it takes
 * `factor` and how that is checked, and its behaviour: a data-side kind changes the silo's
 * dataset before training, an update-side kind changes the update Δ = M_local − M0 the silo
 * sends. These are "misbehaviours" (what a silo does to training); the audit's simulated
 * misreports of utilities are another thing (scoring/manipulation/misreports.ts).
 */
import type { Dataset } from '../dataset.js';

/** One silo's misbehaviour as a run applies it: the kind, its seed (the run's attack stream) and `factor` when given. */
export interface Misbehavior {
  readonly kind: string;
  readonly seed: number;
  readonly factor?: number;
}

interface Common {
  /** The `attacks[].kind` that selects it. */
  readonly name: string;
  /** What it does, one sentence (the configuration's documentation). */
  readonly description: string;
  /** What `factor` means for this kind and its default; absent when the kind takes no factor. */
  readonly factor?: string;
  /** Throws RangeError naming `factor` when the kind cannot use this value. */
  checkFactor?(factor: number): void;
}

/** A misbehaviour that changes the silo's dataset before training. */
export interface DataMisbehaviorDefinition extends Common {
  readonly side: 'data';
  /** The silo's dataset after it (a new object; `ds` is not modified). */
  apply(ds: Dataset, m: Misbehavior): Dataset;
}

/** A misbehaviour that changes the update the silo sends. */
export interface UpdateMisbehaviorDefinition extends Common {
  readonly side: 'update';
  /** The update sent instead of `honest` (a new array; `honest` is not modified). */
  apply(honest: Float32Array, m: Misbehavior): Float32Array;
}

export type MisbehaviorDefinition = DataMisbehaviorDefinition | UpdateMisbehaviorDefinition;
