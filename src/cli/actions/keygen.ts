/**
 * `fedscore keygen --out FILE`: a silo's long-term Ed25519 secret key from the OS CSPRNG, written
 * as 64 hex digits to FILE (mode 0600, never overwritten); prints the public key (hex), which the
 * operator registers in the consortium's participants.
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { signingKeyPairFromSeed } from '../../../crypto/signature.js';
import { UsageError } from '../_flags.js';

/** Runs `fedscore keygen` (flags: src/cli/commands/keygen.ts). @returns the exit code. */
export async function keygenCommand({ out }: { out: string }): Promise<number> {
  const seed = new Uint8Array(randomBytes(32));
  const { publicKey } = signingKeyPairFromSeed(seed);
  try {
    await writeFile(out, `${Buffer.from(seed).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (e) {
    throw new UsageError(
      `--out: cannot write ${out}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  } finally {
    seed.fill(0);
  }
  process.stdout.write(`${Buffer.from(publicKey).toString('hex')}\n`);
  return 0;
}
