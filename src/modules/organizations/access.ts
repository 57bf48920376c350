// Which organizations a principal acts for. Every Core query is constrained by this list in its
// database `where`, so no row of another organization is ever read.
import type { Context } from '../../context.ts';
import { RequestValidationError, type Loc } from '../../graphql/errors.ts';

export function reachableOrganizationIds(ctx: Context): string[] {
  const { principal } = ctx;
  switch (principal.kind) {
    case 'organization':
      return [principal.organizationId];
    case 'user':
      return principal.organizationIds;
    case 'system':
      return [principal.organizationId];
    default:
      return [];
  }
}

/** The reachable organizations, narrowed to those requested (when a filter is given). */
export function organizationFilter(ctx: Context, requested?: string[] | null): { in: string[] } {
  const reachable = reachableOrganizationIds(ctx);
  return { in: requested?.length ? reachable.filter((id) => requested.includes(id)) : reachable };
}

/**
 * The organization a new resource belongs to. An organization token implies its own; a user names
 * one of theirs. An organization the principal cannot reach is answered as if it did not exist.
 */
export function owningOrganization(ctx: Context, requested: string | null | undefined, loc: Loc): string {
  const reachable = reachableOrganizationIds(ctx);
  if (ctx.principal.kind === 'organization' || ctx.principal.kind === 'system') {
    if (requested && requested !== ctx.principal.organizationId) {
      throw RequestValidationError.at(loc, 'Organization not found: an organization token only acts on its own organization.', 'value_error');
    }
    return ctx.principal.organizationId;
  }
  if (!requested) throw RequestValidationError.at(loc, 'Field required: name the organization (organization_id).', 'missing');
  if (!reachable.includes(requested)) throw RequestValidationError.at(loc, 'Organization not found.', 'value_error');
  return requested;
}
