// The scope catalogue is a contract: clients ask for these names, docs/authentication.md lists them,
// and the consent page shows each one's description to the person granting it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { allScopes, identityScopes, isResourceScope, isScope, resourceScopes, scopeDescriptions } from '../../src/auth/scopes.ts';

/** The scopes docs/authentication.md names in its Scopes section (`products:read|write` stands for two). */
function documentedScopes(): string[] {
  const docs = readFileSync(new URL('../../docs/authentication.md', import.meta.url), 'utf8');
  const section = docs.slice(docs.indexOf('## Scopes'), docs.indexOf('A read accepts'));
  const names: string[] = [];
  // A scope is a backticked name with a colon, or an identity scope followed by what it gives: `openid` (…
  for (const [, name, access, explained] of section.matchAll(/`([a-z_]+)(?::([a-z|]+))?`( \()?/g)) {
    if (access !== undefined) names.push(...access.split('|').map((kind) => `${name}:${kind}`));
    else if (explained !== undefined) names.push(name);
  }
  return names;
}

describe('the scope catalogue', () => {
  it('is the one docs/authentication.md lists, name for name', () => {
    expect(new Set(documentedScopes())).toEqual(new Set(allScopes));
    expect(documentedScopes()).toHaveLength(allScopes.length);
  });

  it('holds identity scopes and resource scopes, each once', () => {
    expect([...identityScopes]).toEqual(['openid', 'profile', 'email', 'user:read']);
    expect(new Set(allScopes).size).toBe(allScopes.length);
    expect(allScopes).toEqual([...identityScopes, ...resourceScopes]);
    for (const scope of resourceScopes) expect(scope, scope).toMatch(/^[a-z_]+:(read|write)$/);
  });

  it('tells scopes and resource scopes from anything else', () => {
    expect(isScope('openid')).toBe(true);
    expect(isScope('metrics:read')).toBe(true);
    expect(isResourceScope('metrics:read')).toBe(true);
    expect(isResourceScope('user:read')).toBe(false);
    expect(isResourceScope('openid')).toBe(false);
    for (const value of ['', 'products', 'products:delete', 'PRODUCTS:READ', ' products:read', 'toString', 'constructor', '__proto__']) {
      expect([value, isScope(value), isResourceScope(value)]).toEqual([value, false, false]);
    }
  });

  it('describes every scope in words that match what it grants', () => {
    expect(Object.keys(scopeDescriptions).sort()).toEqual([...allScopes].sort());
    const descriptions = Object.values(scopeDescriptions);
    expect(new Set(descriptions).size).toBe(descriptions.length);
    for (const scope of allScopes) {
      const description = scopeDescriptions[scope];
      expect(description, scope).toMatch(/^[A-Z][a-z]+[ ,].{3,}[a-z]$/);
      // A read scope must not sound like more than it is; a write scope must not sound like less.
      if (scope.endsWith(':read')) expect(description, scope).toMatch(/^Read /);
      if (scope.endsWith(':read')) expect(description, scope).not.toMatch(/\b(create|change|delete|refund|upload|revoke|ingest)\b/i);
      if (scope.endsWith(':write')) expect(description, scope).not.toMatch(/^Read /);
    }
    expect(scopeDescriptions.openid).toBe('Confirm who you are');
    expect(scopeDescriptions.profile).toBe('See your name');
    expect(scopeDescriptions.email).toBe('See your email address');
  });
});
