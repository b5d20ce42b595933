/** `fedscore keygen`: its flag; the action (src/cli/actions/keygen.ts) is imported when it runs. */
import { Option } from 'commander';
import type { CommandDefinition } from '../_command.js';
import { required } from '../_flags.js';

export const keygen: CommandDefinition<{ out: string }, { out: string }> = {
  name: 'keygen',
  summary: "a silo's Ed25519 secret key (64 hex digits); prints the public key",
  description:
    "Writes a silo's long-term Ed25519 secret key, from the OS CSPRNG, as 64 hex digits (mode 0600, never overwritten) and prints its public key (hex), which the operator registers in the consortium's participants.",
  options: [required(new Option('--out <file>', 'the secret key file to write'))],
  args: (flags) => flags,
  run: async (flags) => (await import('../actions/keygen.js')).keygenCommand(flags),
};
