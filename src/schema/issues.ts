/**
 * Problems of a JSON value against a TypeBox schema, one per field, each with the field's JSON
 * path (`rounds[2].withOnly[3]`) — shared by the experiment configuration (config.ts) and the
 * utilities file of `fedscore score` (utilities-file.ts).
 */
import type { TSchema } from 'typebox';
import Value from 'typebox/value';
import { didYouMean } from './did-you-mean.js';

/** One problem: the JSON path of the field (`''` for the root) and what is wrong with it. */
export interface SchemaIssue {
  path: string;
  message: string;
}

/** How `schemaIssues` words its messages. */
export interface IssueWording {
  /**
   * What a union-typed field accepts, by JSON path; a path may name array elements with `[]`
   * (`rounds[].withOnly[]`). Unlisted unions read "does not match any allowed form".
   */
  unions?: Readonly<Record<string, string>>;
  /** `expected a number` instead of TypeBox's `must be number`. */
  expectedTypes?: boolean;
}

/** JSON pointer `/a/0/b` → `a[0].b`. */
export function toPath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p), '');
}

/** The `properties` of the object schema at a TypeBox error's `schemaPath` (`#/properties/training`). */
function propertiesAt(schema: TSchema, schemaPath: string | undefined): Record<string, unknown> {
  let node: unknown = schema;
  for (const part of (schemaPath ?? '#').split('/').slice(1)) {
    if (typeof node !== 'object' || node === null) return {};
    node = (node as Record<string, unknown>)[part.replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  const properties = (node as { properties?: unknown } | undefined)?.properties;
  return typeof properties === 'object' && properties !== null ? (properties as Record<string, unknown>) : {};
}

const article = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

/** Human messages from TypeBox's errors, one per field (the most specific first). */
export function schemaIssues(schema: TSchema, value: unknown, wording: IssueWording = {}): SchemaIssue[] {
  const byPath = new Map<string, string>();
  for (const e of Value.Errors(schema, value)) {
    const err = e as {
      keyword: string;
      instancePath: string;
      params: Record<string, unknown>;
      message: string;
    };
    if (err.keyword === 'boolean') continue; // reported as additionalProperties on the parent
    if (err.keyword === 'additionalProperties') {
      const known = Object.keys(propertiesAt(schema, (err as { schemaPath?: string }).schemaPath));
      for (const key of (err.params.additionalProperties as string[]) ?? [])
        byPath.set(toPath(`${err.instancePath}/${key}`), `unknown key${didYouMean(key, known)}`);
      continue;
    }
    const path = toPath(err.instancePath);
    if (err.keyword === 'anyOf') {
      const hint = wording.unions?.[path] ?? wording.unions?.[path.replace(/\[\d+\]/g, '[]')];
      byPath.set(path, hint ?? 'does not match any allowed form');
      continue;
    }
    if (byPath.has(path)) continue;
    let message = err.message;
    if (err.keyword === 'enum')
      message = `expected one of ${(err.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    if (err.keyword === 'type' && wording.expectedTypes)
      message = `expected ${article(String(err.params.type))}`;
    if (err.keyword === 'required') {
      const missing = (err.params.requiredProperties as string[]) ?? [];
      for (const key of missing) byPath.set(toPath(`${err.instancePath}/${key}`), 'required');
      continue;
    }
    byPath.set(path, message);
  }
  return [...byPath].map(([path, message]) => ({ path, message }));
}
