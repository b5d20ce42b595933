/** The silo's setup error (src/client/silo.ts, ./model-chain.ts). */

/** The silo cannot take part in this consortium (wrong key, model, test set or encoding). */
export class SiloSetupError extends Error {
  constructor(
    readonly field: string,
    detail: string,
  ) {
    super(`${field}: ${detail}`);
    this.name = 'SiloSetupError';
  }
}
