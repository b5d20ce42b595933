/**
 * `fedscore init --strategy <name> [--clients-per-round k]` (issue 37): the networked strategy a
 * project runs, written into its config.json — and so pinned by its consortium file, which carries
 * the configuration's strategy, seed and rounds — so that docs/consortium.md's set-up needs no
 * hand-edited configuration.
 *
 * What it writes: `{ name, clientsPerRound?: k, weights?: 'equal' }`. A project's silos run on
 * their own data (`fedscore client --data`) and know only their own example count, so a strategy
 * that can weigh by example counts (`fedavg`, `score-selection`) is written with equal weights: a
 * silo could not compute the others' weights, and `fedscore client` refuses such a plan
 * (src/fl/own-data.ts `checkLocalStrategy`, which {@link checkProjectStrategy} runs here first).
 */
import type { ConsortiumFile } from '../../consortium/consortium-file.js';
import { type NetworkedRun, siloPlan } from '../../fl/networked.js';
import { checkLocalStrategy, localNetworkedRun } from '../../fl/own-data.js';
import { createStrategy, networkedSupport, type StrategyConfig } from '../../strategies/registry.js';

/**
 * Fewest silos a round may select: in a round of 2 each silo reads the other's update off the sum
 * (issue 32, W1; every silo refuses a smaller round).
 */
export const MIN_SELECTED = 3;

/**
 * The strategy block of a project's config.json.
 * @param name a registered strategy that runs under secure aggregation alone.
 * @param clientsPerRound k, the silos per round (default: the strategy's own).
 * @param silos the project's silo count.
 * @throws RangeError naming `--strategy` or `--clients-per-round`.
 */
export function projectStrategy(
  name: string,
  clientsPerRound: number | undefined,
  silos: number,
): StrategyConfig {
  let support: ReturnType<typeof networkedSupport>;
  try {
    support = networkedSupport(name);
  } catch (e) {
    throw new RangeError(`--strategy: ${(e as Error).message.replace(/^strategy\.name: /, '')}`);
  }
  if (typeof support !== 'string')
    throw new RangeError(`--strategy: '${name}' does not run over the network: ${support.refused}`);
  if (clientsPerRound !== undefined && !(Number.isInteger(clientsPerRound) && clientsPerRound >= 1))
    throw new RangeError(`--clients-per-round: expected a positive integer, got ${clientsPerRound}`);
  if (clientsPerRound !== undefined && clientsPerRound > silos)
    throw new RangeError(`--clients-per-round: ${clientsPerRound} is more than the project's ${silos} silos`);
  const config: StrategyConfig = { name, ...(clientsPerRound !== undefined ? { clientsPerRound } : {}) };
  // Equal weights where the strategy has the choice (see the module comment).
  const equal = { ...config, weights: 'equal' };
  if (accepts(equal)) return equal;
  if (!accepts(config))
    throw new RangeError(`--clients-per-round: '${name}' takes no round size (clientsPerRound)`);
  return config;
}

/** Whether the registry builds `config` (its parameters known and in range). */
function accepts(config: StrategyConfig): boolean {
  try {
    createStrategy(config);
    return true;
  } catch {
    return false;
  }
}

/**
 * Checks the project's round size as its processes will run it: round 1 selects at least
 * {@link MIN_SELECTED} silos and at least t (a round of k selected silos needs t ≤ k).
 * @throws RangeError naming `--clients-per-round` when it would not run.
 */
export async function checkRoundSize(run: NetworkedRun, threshold: number): Promise<void> {
  const plan = await siloPlan(run, 1, []);
  if (plan === undefined) return;
  const k = plan.selected.length;
  const n = run.config.silos;
  const need = Math.max(MIN_SELECTED, threshold);
  if (k < need)
    throw new RangeError(
      `--clients-per-round: the strategy selects ${k} of the ${n} silos a round; a round needs at least ${need} (${MIN_SELECTED} so that no silo reads another's update off the sum, and t = ${threshold})${n >= need ? `: pass --clients-per-round ${need}` : `: use more --silos`}`,
    );
}

/**
 * Checks that a silo on its own data accepts the project's strategy (`fedscore client`'s check,
 * src/fl/own-data.ts `checkLocalStrategy`), for the first and the last silo.
 * @throws RangeError naming `--strategy` when one would refuse it.
 */
export async function checkLocalPlans(run: NetworkedRun, file: ConsortiumFile): Promise<void> {
  if (run.config.strategy === undefined) return;
  const n = run.config.silos;
  for (const silo of [0, n - 1]) {
    const local = localNetworkedRun(run.config, run.seed, {
      silo,
      train: run.data.silos[silo]!,
      test: run.data.test,
      file,
    });
    try {
      await checkLocalStrategy(local, silo);
    } catch (e) {
      throw new RangeError(
        `--strategy: silo ${silo} on its own data would refuse it: ${(e as Error).message}`,
      );
    }
  }
}
