// The authorization endpoint (RFC 6749 §3.1, OpenID Connect Core §3.1.2): a page that signs the
// user in, asks for consent (and, for an organization-scoped grant, which organization), and sends
// the user back to the client with a one-time code, or with `error=access_denied`. The consent form
// carries the request, which is checked again in full when the form comes back: nothing in it is
// trusted more than the original query. `GET /v1/oauth2/authorize` answers the same request as
// JSON for a frontend of the integrator's own, with the user's session token as Bearer.
import type { Environment } from '../context.ts';
import { resolvePrincipal } from '../auth/principals.ts';
import { bearerToken } from '../http/request.ts';
import { KassaError } from '../graphql/errors.ts';
import { scopeDescriptions, type Scope } from '../auth/scopes.ts';
import { html, page } from '../pages/html.ts';
import type { BrowserSession } from '../auth/sessions.ts';
import { checkSessionCsrf, currentSession, pagesPath, sameOriginPost, sessionCsrfToken } from '../pages/session.ts';
import {
  type AuthorizationRequest,
  RedirectableError,
  UntrustedRedirect,
  checkAuthorizationRequest,
  needsFreshSignIn,
  redirectWith,
  requestParameterNames,
} from './authorization-request.ts';
import { AccessDenied, InvalidRequest, InvalidToken, OAuthError } from './errors.ts';
import { issueAuthorizationCode } from './grants.ts';
import { formBody, json, redirect, type OAuthRequest, type OAuthResponse } from './http.ts';
import type { OAuthRoute } from './routes.ts';

interface Organization {
  id: string;
  name: string;
  slug: string;
}

function organizationsOf(environment: Environment, userId: string): Promise<Organization[]> {
  return environment.prisma.organization.findMany({ where: { members: { some: { userId } } }, select: { id: true, name: true, slug: true }, orderBy: { name: 'asc' } });
}

function errorPage(environment: Environment, error: OAuthError): OAuthResponse {
  const body = html`<h1>This sign-in link does not work</h1>
<p class="error" role="alert">${error.description}</p>
<p class="muted">Go back to the application and start again. If it keeps happening, tell the application's developer (error: ${error.error}).</p>`;
  return page(body, { title: 'Authorization error', environment: environment.name, status: 400 });
}

function redirectError(environment: Environment, error: RedirectableError): OAuthResponse {
  return redirect(redirectWith(error.redirectUri, environment.publicUrl, { error: error.reason.error, error_description: error.reason.description, state: error.state }));
}

/**
 * Runs a step of the page flow, turning the request's errors into an error page or a redirect to
 * the client. Any signed-in user can register a client with any https redirect URI, so an error
 * is sent there only for a user who has signed in here (RFC 9700 §4.11.2): a bad request from a
 * link cannot bounce an anonymous visitor to a site of the link's choosing. A `prompt=none`
 * request is the exception: it must never show a page (OpenID Connect Core §3.1.2.6), and its
 * answer to a signed-out visitor, `login_required`, goes to the client's registered redirect URI
 * anyway, so its other errors go there too.
 */
async function answering(environment: Environment, mayRedirect: boolean, step: () => Promise<OAuthResponse>): Promise<OAuthResponse> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof UntrustedRedirect) return errorPage(environment, error);
    if (error instanceof RedirectableError) return mayRedirect ? redirectError(environment, error) : errorPage(environment, error.reason);
    if (error instanceof OAuthError) return errorPage(environment, error);
    throw error;
  }
}

/** The request's own parameters, for the return after signing in and for the consent form. */
function carriedParameters(params: URLSearchParams): URLSearchParams {
  const carried = new URLSearchParams();
  for (const name of requestParameterNames) {
    const value = params.get(name);
    if (value !== null) carried.set(name, value);
  }
  return carried;
}

/** To the sign-in page, and back here after; `again` when a signed-in user must enter their password anew. */
function signInRedirect(environment: Environment, params: URLSearchParams, again = false): OAuthResponse {
  const returnTo = `${pagesPath(environment)}/authorize?${carriedParameters(params)}`;
  return redirect(`${pagesPath(environment)}/login?${new URLSearchParams({ return_to: returnTo, ...(again ? { again: '1' } : {}) })}`);
}

async function consentPage(environment: Environment, request: AuthorizationRequest, params: URLSearchParams, session: BrowserSession, error?: string): Promise<OAuthResponse> {
  const { client } = request;
  const organizations = request.subType === 'organization' ? await organizationsOf(environment, session.user.id) : [];
  const csrf = await sessionCsrfToken(environment, session, 'consent');
  const hidden = [...carriedParameters(params)].map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`);
  const noOrganization = request.subType === 'organization' && organizations.length === 0;
  const body = html`<h1>Allow ${client.clientName} to access your account?</h1>
<p>Signed in as <strong>${session.user.email}</strong>.</p>
${client.clientUri ? html`<p class="muted">Application: <a href="${client.clientUri}" rel="noopener noreferrer">${client.clientUri}</a></p>` : ''}
${error ? html`<p class="error" role="alert" id="consent-error">${error}</p>` : ''}
<form method="post" action="${pagesPath(environment)}/authorize">
<input type="hidden" name="csrf_token" value="${csrf}">
${hidden}
<p>${client.clientName} will be able to:</p>
<ul class="scopes">
${request.scopes.map((scope: Scope) => html`<li>${scopeDescriptions[scope]} <span class="muted">(${scope})</span></li>`)}
</ul>
${
  request.subType === 'organization'
    ? noOrganization
      ? html`<p class="error" role="alert">You do not belong to any organization, so there is nothing to grant access to.</p>`
      : html`<fieldset${error ? html` aria-describedby="consent-error"` : ''}>
<legend>For which organization?</legend>
${organizations.map(
  (organization, i) => html`<div class="choice"><input type="radio" id="organization-${organization.id}" name="organization_id" value="${organization.id}"${i === 0 && organizations.length === 1 ? html` checked` : ''} required>
<label for="organization-${organization.id}">${organization.name} <span class="muted">(${organization.slug})</span></label></div>`,
)}
</fieldset>`
    : html`<p class="muted">Access is to your user account, with every organization you belong to.</p>`
}
<div class="actions">
${noOrganization ? '' : html`<button type="submit" name="decision" value="approve">Allow</button>`}
<button type="submit" name="decision" value="deny" class="secondary" formnovalidate>Deny</button>
</div>
</form>`;
  return page(body, { title: 'Authorize application', environment: environment.name, formTargets: [new URL(request.redirectUri).origin], status: error ? 400 : 200 });
}

async function showAuthorization(environment: Environment, oauthRequest: OAuthRequest, now: Date): Promise<OAuthResponse> {
  const session = await currentSession(environment, oauthRequest, now);
  const params = oauthRequest.query;
  return answering(environment, session !== null || params.getAll('prompt').join() === 'none', async () => {
    const request = await checkAuthorizationRequest(environment.prisma, params);
    const signInNeeded = !session || needsFreshSignIn(request, session.createdAt, now);
    if (request.prompts.includes('none')) {
      // Consent is asked every time, so a request that may not show a page cannot be granted.
      const error = signInNeeded ? new OAuthError('login_required', 'The user must sign in.') : new OAuthError('consent_required', 'The user must consent on the authorization page.');
      throw new RedirectableError(error, request.redirectUri, request.state);
    }
    if (signInNeeded) return signInRedirect(environment, params, session !== null);
    return consentPage(environment, request, params, session);
  });
}

async function decide(environment: Environment, oauthRequest: OAuthRequest, now: Date): Promise<OAuthResponse> {
  const session = await currentSession(environment, oauthRequest, now);
  return answering(environment, session !== null, async () => {
    const form = formBody(oauthRequest);
    const request = await checkAuthorizationRequest(environment.prisma, form);
    // prompt=login was honoured by the sign-in that led here; max_age still holds.
    if (!session) return signInRedirect(environment, form);
    if (request.maxAge !== null && needsFreshSignIn({ ...request, prompts: [] }, session.createdAt, now)) return signInRedirect(environment, form, true);
    if (!sameOriginPost(environment, oauthRequest) || !(await checkSessionCsrf(environment, session, 'consent', form.get('csrf_token')))) {
      throw new OAuthError('invalid_request', 'The consent form has expired or did not come from this site. Start the authorization again.');
    }
    const decision = form.get('decision');
    if (decision === 'deny') {
      throw new RedirectableError(new AccessDenied('The user denied the request.'), request.redirectUri, request.state);
    }
    if (decision !== 'approve') throw new InvalidRequest('The consent form carried no decision.');
    let organizationId: string | null = null;
    if (request.subType === 'organization') {
      organizationId = form.get('organization_id');
      const organizations = await organizationsOf(environment, session.user.id);
      if (!organizationId || !organizations.some((o) => o.id === organizationId)) {
        return consentPage(environment, request, form, session, 'Choose one of your organizations.');
      }
    }
    const code = await issueAuthorizationCode(environment, request, { userId: session.user.id, organizationId, authTime: session.createdAt }, now);
    return redirect(redirectWith(request.redirectUri, environment.publicUrl, { code, state: request.state }));
  });
}

/** `GET /v1/oauth2/authorize`: the request as the client library models it, for a signed-in user's own frontend. */
async function describeAuthorization(environment: Environment, oauthRequest: OAuthRequest, now: Date): Promise<OAuthResponse> {
  let principal;
  try {
    principal = await resolvePrincipal(environment, bearerToken(oauthRequest.facts), now);
  } catch (error) {
    if (error instanceof KassaError) throw new InvalidToken(error.message);
    throw error;
  }
  if (principal.kind !== 'user' || principal.credential !== 'session') throw new InvalidToken('Send the signed-in user\'s session token as "Authorization: Bearer <token>".');
  let request: AuthorizationRequest;
  try {
    request = await checkAuthorizationRequest(environment.prisma, oauthRequest.query);
  } catch (error) {
    if (error instanceof RedirectableError) throw error.reason;
    throw error;
  }
  const { client } = request;
  const publicClient = {
    created_at: client.createdAt.toISOString(),
    modified_at: client.modifiedAt?.toISOString() ?? null,
    client_id: client.clientId,
    client_name: client.clientName,
    client_uri: client.clientUri,
    logo_uri: client.logoUri,
    tos_uri: client.tosUri,
    policy_uri: client.policyUri,
  };
  if (request.subType === 'user') {
    const user = await environment.prisma.user.findUniqueOrThrow({ where: { id: principal.userId }, select: { id: true, email: true } });
    return json(200, { client: publicClient, sub_type: 'user', sub: { id: user.id, email: user.email, avatar_url: null }, scopes: request.scopes });
  }
  const organizations = (await organizationsOf(environment, principal.userId)).map((o) => ({ id: o.id, slug: o.slug, avatar_url: null }));
  return json(200, { client: publicClient, sub_type: 'organization', sub: null, scopes: request.scopes, organizations });
}

export const authorizeRoutes: OAuthRoute[] = [
  { method: 'GET', path: '/oauth2/authorize', handler: showAuthorization },
  { method: 'POST', path: '/oauth2/authorize', handler: decide },
  { method: 'GET', path: '/v1/oauth2/authorize', handler: describeAuthorization },
];
