#!/usr/bin/env node
// The `fedscore` command (package.json "bin"). In a checkout after `npm ci` it runs the TypeScript
// sources through tsx, so `npx fedscore` never runs a stale build; in an installed package (a
// tarball from `npm pack`, or `npm install -g`), which ships dist/ and no sources, the built CLI.
import { existsSync } from 'node:fs';

const sources = new URL('../src/cli/main.ts', import.meta.url);
const built = new URL('../dist/src/cli/main.js', import.meta.url);

async function tsxRegistered() {
  try {
    const { register } = await import('tsx/esm/api');
    register();
    return true;
  } catch {
    return false; // tsx is a devDependency: absent where only the runtime dependencies were installed
  }
}

if (existsSync(sources) && (await tsxRegistered())) {
  await import(sources.href);
} else if (existsSync(built)) {
  await import(built.href);
} else {
  console.error(
    'fedscore: neither the sources with tsx (run `npm ci` in the checkout) nor the built CLI ' +
      `(${built.pathname}: run \`npm run build\`) are here`,
  );
  process.exitCode = 1;
}
