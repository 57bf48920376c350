// Scopes as GraphQL enums. A scope's name is its wire string with `:` as `_` (`products_read`);
// its internal value, which the services receive and store, is the string itself (`products:read`).
import { scopeDescriptions, type Scope } from '../auth/scopes.ts';
import { builder } from './builder.ts';
import { wireNamedValues } from './wire-values.ts';

/** The enum `name` of `scopes`, in their order, each described by what it lets a token do. */
export function scopeEnum<S extends Scope>(name: string, description: string, scopes: readonly S[]) {
  const descriptions = Object.fromEntries(scopes.map((scope) => [scope, scopeDescriptions[scope]])) as Record<S, string>;
  return builder.enumType(name, { description, values: wireNamedValues(descriptions, 'in OAuth, the CLI and error messages') });
}
