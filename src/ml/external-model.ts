/**
 * The `external` model kind: a model that fedscore does not run itself but hands to the silo's
 * trainer process (docs/trainer.md; src/fl/learner/trainer-learner.ts), e.g. a PyTorch model on the
 * silo's GPU. A configuration names it as `model: { kind: "external", command: "python3 model.py" }`;
 * its topology is the trainer's layout (names and shapes), pinned by digest in the consortium file.
 *
 * Registered by model-registry.ts after the built-ins (it has no layer spec: `build` refuses, and
 * src/fl/learner/create-learner.ts starts a trainer instead of TF.js for it).
 */
import Type from 'typebox';

/** Options of the `external` model. */
export interface ExternalModelOptions {
  /** The trainer's command line, run by the shell in the working directory. */
  command?: string;
  /** A `.npy` file (float32 [d]) holding the consortium's initial model M0; otherwise the trainer's `init`. */
  initialWeights?: string;
  /** The consortium's topology digest (the layout's), checked when set. */
  topologyDigest?: string;
  /** The consortium's initial-weights digest, checked when set. */
  weightsDigest?: string;
  /** Seconds each operation may take (defaults: layout 120, init 120, train 3600, evaluate 600). */
  timeouts?: { layout?: number; init?: number; train?: number; evaluate?: number };
}

const SHA256_HEX = '^[0-9a-f]{64}$';
const seconds = (what: string) =>
  Type.Optional(
    Type.Number({ exclusiveMinimum: 0, maximum: 7 * 24 * 3600, description: `Seconds for ${what}.` }),
  );

/** The definition (a `ModelDefinition<ExternalModelOptions>`, typed where model-registry.ts registers it: no import cycle). */
export const EXTERNAL_MODEL = {
  kind: 'external',
  description:
    "a model in the silo's own trainer process (PyTorch or any language speaking docs/trainer.md's protocol): it trains, evaluates and plays the coalition games",
  options: Type.Object(
    {
      command: Type.Optional(
        Type.String({
          minLength: 1,
          description:
            "The trainer's command line, run by the shell in the working directory (e.g. `python3 model.py`); `fedscore client --trainer` overrides it.",
        }),
      ),
      initialWeights: Type.Optional(
        Type.String({
          minLength: 1,
          description:
            "A .npy file (float32, one value per parameter in the layout's order) holding the initial model M0; without it, M0 is the trainer's `init` for the run's seed.",
        }),
      ),
      topologyDigest: Type.Optional(
        Type.String({
          pattern: SHA256_HEX,
          description: "SHA-256 of the trainer's layout, checked when set",
        }),
      ),
      weightsDigest: Type.Optional(
        Type.String({ pattern: SHA256_HEX, description: 'SHA-256 of the initial weights, checked when set' }),
      ),
      timeouts: Type.Optional(
        Type.Object(
          {
            layout: seconds("`layout` (the trainer's start included)"),
            init: seconds('`init`'),
            train: seconds('one `train`'),
            evaluate: seconds('one `evaluate` request'),
          },
          {
            additionalProperties: false,
            description: 'Seconds each operation may take before the trainer is stopped.',
          },
        ),
      ),
    },
    { additionalProperties: false },
  ),
  build: (): never => {
    throw new RangeError(
      "kind: model 'external' runs in its trainer process (docs/trainer.md) and has no TF.js layers; start it with createLearner (src/fl/learner/create-learner.ts)",
    );
  },
};
