/**
 * A consortium project (`fedscore init <dir>` writes it, `fedscore up <dir>` runs it): the folder's
 * `fedscore-project.json` says where each file is, and {@link projectCommands} gives the command
 * lines that run it — the same ones `up` starts as processes on one machine and the folder's
 * README tells each machine to type (docs/consortium.md; test/e2e/up.test.ts checks both).
 *
 * Every path in the project file is relative to the project folder, and every command runs in it:
 * the folder can be copied to another machine (or the silos' sub-folders handed out) as it is.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LocalFormat } from '../../data/local-data.js';

/** One silo of a project: its folder, key, data and example count. */
export interface ProjectSilo {
  /** Its name, the folder under `silos/`. */
  name: string;
  /** Its id in the consortium (its line in keys.txt, minus one). */
  id: number;
  /** Its secret key file. */
  key: string;
  /** What to give `fedscore client --data`. */
  data: string;
  format: LocalFormat;
  /** Its example count (its aggregation weight, which it tells the operator). */
  examples: number;
}

/** `fedscore-project.json`. */
export interface Project {
  format: 'fedscore-project';
  version: 1;
  /** The consortium id. */
  id: string;
  config: string;
  /** The model's file: the Layers model.json, or a PyTorch project's model.py. */
  model: string;
  /** A PyTorch project: each silo's trainer command (`fedscore client --trainer`), run in the folder. */
  trainer?: string;
  keys: string;
  consortiumFile: string;
  /** The consortium file's SHA-256 digest, which silos pin. */
  digest: string;
  testSet: string;
  tokens: { admin: string; viewer: string };
  /** The service's SQLite file. */
  db: string;
  silos: ProjectSilo[];
}

export const PROJECT_FILE = 'fedscore-project.json';

/**
 * Reads `<dir>/fedscore-project.json`.
 * @throws RangeError naming the file and the problem.
 */
export function readProject(dir: string): Project {
  const path = join(dir, PROJECT_FILE);
  let p: Project;
  try {
    p = JSON.parse(readFileSync(path, 'utf8')) as Project;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new RangeError(
      code === 'ENOENT'
        ? `${dir} is not a consortium project (no ${PROJECT_FILE}; create one with "fedscore init ${dir}")`
        : code === 'ENOTDIR'
          ? `${dir} is a file, not a consortium project's folder (give the folder fedscore init made, the one holding ${PROJECT_FILE})`
          : `${path}: ${code === undefined ? (e as Error).message : `cannot be read (${code})`}`,
    );
  }
  if (p?.format !== 'fedscore-project' || p.version !== 1 || !Array.isArray(p.silos))
    throw new RangeError(`${path}: format: expected a version-1 fedscore-project file`);
  return p;
}

/** The command lines of a project, as `fedscore` arguments (run in the project folder). */
export interface ProjectCommands {
  /** The operator's service. */
  serve: string[];
  /** The operator's registration of the consortium (writes the same consortium file). */
  create: string[];
  /** Each silo's client, by silo id. */
  clients: string[][];
}

/**
 * The commands that run project `p` with the service at `server` listening on `port`.
 * `backend` pins the TF.js backend of every process (tests pass `cpu`).
 */
export function projectCommands(
  p: Project,
  o: { server: string; port: number; backend?: string },
): ProjectCommands {
  const backend = o.backend ? ['--backend', o.backend] : [];
  return {
    serve: ['serve', '--port', String(o.port), '--db', p.db, '--config', p.config, ...backend],
    create: [
      'consortium',
      'create',
      '--server',
      o.server,
      '--id',
      p.id,
      '--config',
      p.config,
      '--keys',
      p.keys,
      '--out',
      p.consortiumFile,
      '--examples',
      p.silos.map((s) => s.examples).join(','),
      ...backend,
    ],
    clients: p.silos.map((s) => [
      'client',
      '--server',
      o.server,
      '--consortium',
      p.id,
      '--silo',
      String(s.id),
      '--key',
      s.key,
      '--config',
      p.config,
      '--consortium-file',
      p.consortiumFile,
      '--consortium-digest',
      p.digest,
      '--data',
      s.data,
      '--test-data',
      p.testSet,
      ...(p.trainer !== undefined ? ['--trainer', p.trainer] : ['--model', p.model]),
      ...backend,
    ]),
  };
}

/** A command line for a shell: `fedscore` and the arguments, quoted where needed. */
export function shellLine(args: readonly string[]): string {
  const q = (a: string) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);
  return ['fedscore', ...args.map(q)].join(' ');
}

/** The environment of the operator's commands, from the project's token files. */
export function operatorEnv(
  dir: string,
  p: Project,
): { FEDSCORE_ADMIN_TOKEN: string; FEDSCORE_VIEWER_TOKEN: string } {
  return {
    FEDSCORE_ADMIN_TOKEN: readFileSync(join(dir, p.tokens.admin), 'utf8').trim(),
    FEDSCORE_VIEWER_TOKEN: readFileSync(join(dir, p.tokens.viewer), 'utf8').trim(),
  };
}
