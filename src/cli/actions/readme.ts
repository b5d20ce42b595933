/**
 * The README `fedscore init` writes into a project: what each file is, and which command each
 * machine runs — the command lines of projectCommands (project.ts), the same `fedscore up` runs.
 */
import { FORMAT_FILES } from '../../data/write-local-data.js';
import { type Project, projectCommands, shellLine } from './project.js';

/** Where the README's commands reach the service from another machine. */
export const README_SERVER = 'http://OPERATOR-HOST:8080';

/** The README of project `p`. */
export function projectReadme(p: Project): string {
  const cmds = projectCommands(p, { server: README_SERVER, port: 8080 });
  const silo = p.silos.map(
    (s) =>
      `| \`silos/${s.name}/\` | silo ${s.id}'s folder: \`${s.key.split('/').pop()}\` (its Ed25519 secret key; never leaves it) and \`${s.data.slice(`silos/${s.name}/`.length)}\` (its ${s.examples} training examples, ${s.format}: ${FORMAT_FILES[s.format]}) |`,
  );
  return `# Consortium project \`${p.id}\`

Written by \`fedscore init\`. Run it on this machine (the service and every silo as separate
processes, the rounds opened by the service's schedule):

\`\`\`sh
fedscore up .
\`\`\`

The dashboard URL it prints works while \`up\` runs; \`fedscore up . --keep-serving\` keeps the service
and its dashboard up after the last round, until Ctrl-C.

Every command runs in this folder (paths below are relative to it). From a checkout of fedscore,
\`fedscore\` is \`npm --prefix <checkout> run -s fedscore --\` (see the checkout's docs/consortium.md).

| file | what it is |
|---|---|
| \`fedscore-project.json\` | where everything below is (read by \`fedscore up\`) |
| \`config.json\` | the experiment configuration: data set, model, training, rounds, strategy |
${
  p.trainer
    ? `| \`${p.model}\` | the agreed PyTorch model: \`model()\`, \`train(model, data, seed)\`, \`evaluate(model, data)\`, served to fedscore by \`fedscore_client.trainer\` (each silo runs \`${p.trainer}\`; docs/trainer.md) |\n| \`initial.npy\`, \`layout.json\` | the initial model M0 (float32, in the layout's order) and the layout (names and shapes) the consortium file pins by digest |`
    : '| `model/` | the agreed TF.js Layers model (`model.json` and its weight files); its weights are the initial model M0 |'
}
${silo.join('\n')}
| \`keys.txt\` | the silos' public keys, one per line (silo id = line − 1) |
| \`test-set/\` | the common test set every silo holds (\`x.npy\`, \`y.npy\`) |
| \`consortium.json\` | the consortium file every silo pins; its digest is \`${p.digest}\` |
| \`tokens/admin.token\`, \`tokens/viewer.token\` | the operator's secret tokens (admin; read-only dashboard) |
| \`fedscore.db\` | the service's SQLite store (written by \`serve\`); the next \`fedscore up\` resumes from it (\`--fresh\` starts over and keeps it as \`fedscore.db.<date>\`) |
| \`scores.json\` | the leaderboard and every round's scores (written by \`fedscore up\` at the end; \`fedscore score\`'s format) |
| \`fedscore.lock\` | present while a \`fedscore up\` runs here (its PID): a second one refuses |
| \`logs/\` | each process's log, appended run after run (written by \`fedscore up\`) |

## The same consortium on separate machines

Copy this folder to the operator's machine; give each silo the folder without \`tokens/\` and
without the other silos' folders. Read the digest above to each silo over another channel (phone,
signed e-mail): it is what tells a silo that the \`consortium.json\` it got is the agreed one.

The operator (replace \`OPERATOR-HOST\` with the machine's address; serve behind TLS off a
private network, with \`--host\`):

\`\`\`sh
export FEDSCORE_ADMIN_TOKEN=$(cat ${p.tokens.admin}) FEDSCORE_VIEWER_TOKEN=$(cat ${p.tokens.viewer})
${shellLine(cmds.serve)} &
${shellLine(cmds.create)}
\`\`\`

Each silo, on its own machine:

\`\`\`sh
${cmds.clients.map(shellLine).join('\n')}
\`\`\`

The dashboard: \`${README_SERVER}/dashboard/${p.id}#token=<tokens/viewer.token>\`.
`;
}
