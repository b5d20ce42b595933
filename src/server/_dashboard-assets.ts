/**
 * The dashboard's script files (internal to routes/dashboard.ts): the browser builds of vega,
 * vega-lite and vega-embed, read from the installed packages — no CDN, so the page works on a
 * machine without internet and its Content-Security-Policy allows scripts from its own origin
 * only. vega-embed's build bundles vega-interpreter, the expression evaluator the page selects
 * with `ast: true` so that Vega never compiles code at run time (no 'unsafe-eval').
 *
 * Each file is read, hashed (its ETag) and gzipped once per process, on its first request.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';

const require = createRequire(import.meta.url);

/**
 * URL file name → [package, file]. Each package's entry point lies in its `build/` directory,
 * next to the browser build (a UMD script defining the globals `vega`, `vegaLite`, `vegaEmbed`);
 * the packages export no other path, so the file is found beside the resolved entry point.
 */
const FILES = {
  'vega.min.js': ['vega', 'vega.min.js'],
  'vega-lite.min.js': ['vega-lite', 'vega-lite.min.js'],
  'vega-embed.min.js': ['vega-embed', 'vega-embed.min.js'],
} as const;

/** The file names under `/dashboard/_assets/`, in the order the page loads them. */
export const ASSET_NAMES = Object.keys(FILES) as AssetName[];
export type AssetName = keyof typeof FILES;

/** A script file, as served. */
export interface Asset {
  readonly body: Buffer;
  readonly gzipped: Buffer;
  /** A strong ETag: the SHA-256 of the body. */
  readonly etag: string;
}

/** Where asset `name` lies in node_modules. @throws Error when the package's build is missing. */
export function assetPath(name: AssetName): string {
  const [pkg, file] = FILES[name];
  const path = join(dirname(require.resolve(pkg)), file);
  if (!existsSync(path)) throw new Error(`${name}: ${path} is missing (is ${pkg} installed?)`);
  return path;
}

const loaded = new Map<AssetName, Promise<Asset>>();

async function load(name: AssetName): Promise<Asset> {
  const body = await readFile(assetPath(name));
  const etag = `"${createHash('sha256').update(body).digest('base64url')}"`;
  return { body, gzipped: await promisify(gzip)(body), etag };
}

/** The asset `name`, read on first use and kept in memory. */
export function dashboardAsset(name: AssetName): Promise<Asset> {
  let asset = loaded.get(name);
  if (!asset) {
    asset = load(name);
    asset.catch(() => loaded.delete(name)); // a failed read is retried on the next request
    loaded.set(name, asset);
  }
  return asset;
}
