/**
 * Internal: documentation added to a TypeBox schema (docs/config.md is generated from the
 * configuration schema's annotations, scripts/gen-config-docs.ts). Never re-exported.
 */
import type { TSchema } from 'typebox';

/**
 * `schema` with `description` and `default` added, `default` as an annotation only (parseConfig
 * validates with `Value.Errors`, which never fills defaults in). A copy; TypeBox's markers (its
 * non-enumerable `~` keys, which a spread would drop) are kept.
 */
export const withDoc = <T extends TSchema>(schema: T, o: { description?: string; default?: unknown }): T =>
  Object.defineProperties(
    {},
    { ...Object.getOwnPropertyDescriptors(schema), ...Object.getOwnPropertyDescriptors(o) },
  ) as T;
