// The sign-up page and the page a verification link opens. Both run the schema's own mutations
// (signUp, userEmailVerify) in-process, so the page and the API keep the same rules: the same answer
// whether or not the address had an account, the same limits, the same refusals.
// - The sign-up form carries the sign-in form's CSRF token (a cookie and its HMAC) and must come
//   from this origin, as the sign-in form must.
// - Opening a verification link verifies nothing: the page shows a button whose post does, so a
//   mail scanner that fetches every link spends no token. That form's token is bound to the link.
import { parse, type ExecutionResult } from 'graphql';
import type { Context, Environment } from '../context.ts';
import { formBody, type OAuthRequest, type OAuthResponse } from '../oauth/http.ts';
import type { OAuthRoute } from '../oauth/routes.ts';
import { html, page } from './html.ts';
import { boundFormToken, checkBoundFormToken, checkSignInCsrf, pagesPath, sameOriginPost, signInCsrf } from './session.ts';

const operations = {
  signUp: parse(`mutation ($email: String!, $password: String!) { signUp(email: $email, password: $password) { email } }`),
  verifyEmail: parse(`mutation ($token: String!) { userEmailVerify(token: $token) { email } }`),
};

/** The minimum the signUp mutation asks for, told on the form. */
const minPasswordLength = 12;

function anonymous(environment: Environment, request: OAuthRequest, now: Date): Context {
  return { environment, prisma: environment.prisma, principal: { kind: 'anonymous' }, requestId: request.requestId, clientIp: request.clientIp, now: () => now };
}

interface FieldErrors {
  email?: string;
  password?: string;
  form?: string;
}

/** The form's errors by field, from the mutation's error; a refusal that names no field is the form's. */
function fieldErrors(result: ExecutionResult): FieldErrors {
  const error = result.errors![0];
  const issues = (error.extensions?.issues ?? []) as { loc: (string | number)[]; msg: string }[];
  const errors: FieldErrors = {};
  for (const issue of issues) {
    const field = issue.loc.at(-1);
    if (field === 'email') errors.email = 'Enter a valid email address.';
    else if (field === 'password') errors.password = `${issue.msg}.`;
  }
  if (!errors.email && !errors.password) errors.form = error.message;
  return errors;
}

async function signUpPage(environment: Environment, request: OAuthRequest, options: { email?: string; errors?: FieldErrors; status?: number; headers?: Record<string, string> } = {}) {
  const csrf = await signInCsrf(environment, request);
  const errors = options.errors ?? {};
  const described = (id: string, message?: string) => (message ? html` aria-describedby="${id}" aria-invalid="true"` : '');
  const body = html`<h1>Create your Kassa account</h1>
${errors.form ? html`<p class="error" role="alert">${errors.form}</p>` : ''}
<form method="post" action="${pagesPath(environment)}/sign-up" novalidate>
<input type="hidden" name="csrf_token" value="${csrf.token}">
<label for="email">Email</label>
${errors.email ? html`<p class="error" role="alert" id="email-error">${errors.email}</p>` : ''}
<input type="email" id="email" name="email" autocomplete="username" required value="${options.email ?? ''}"${described('email-error', errors.email)}>
<label for="password">Password <span class="muted">(at least ${minPasswordLength} characters)</span></label>
${errors.password ? html`<p class="error" role="alert" id="password-error">${errors.password}</p>` : ''}
<input type="password" id="password" name="password" autocomplete="new-password" required minlength="${minPasswordLength}"${described('password-error', errors.password)}>
<div class="actions"><button type="submit">Sign up</button></div>
</form>
<p class="muted">Already have an account? <a href="${pagesPath(environment)}/login">Sign in</a>.</p>`;
  return page(body, { title: 'Sign up', environment: environment.name, status: options.status, headers: { 'set-cookie': csrf.setCookie, ...options.headers } });
}

async function showSignUp(environment: Environment, request: OAuthRequest): Promise<OAuthResponse> {
  return signUpPage(environment, request);
}

async function signUp(environment: Environment, request: OAuthRequest, now: Date): Promise<OAuthResponse> {
  const form = formBody(request);
  const email = (form.get('email') ?? '').trim();
  const password = form.get('password') ?? '';
  if (!sameOriginPost(environment, request) || !(await checkSignInCsrf(environment, request, form.get('csrf_token')))) {
    return signUpPage(environment, request, { email, status: 403, errors: { form: 'This form has expired or did not come from this site. Please try again.' } });
  }
  const result = await environment.graphql!(operations.signUp, { email, password }, anonymous(environment, request, now));
  if (result.errors?.length) {
    const status = (result.errors[0].extensions?.http as { status?: number } | undefined)?.status ?? 400;
    const retryAfter = result.errors[0].extensions?.retryAfter;
    return signUpPage(environment, request, { email, status, errors: fieldErrors(result), headers: retryAfter ? { 'retry-after': String(retryAfter) } : undefined });
  }
  const sentTo = (result.data as { signUp: { email: string } }).signUp.email;
  const body = html`<h1>Check your email</h1>
<p role="status">We sent an email to <strong>${sentTo}</strong>. Follow its link to confirm your address; the link works once, for 24 hours.</p>
<p class="muted">You can sign in now, and create an organization once your address is confirmed.</p>`;
  return page(body, { title: 'Check your email', environment: environment.name });
}

const verifySubject = (token: string) => `verify-email:${token}`;

async function showVerify(environment: Environment, request: OAuthRequest): Promise<OAuthResponse> {
  const token = request.query.get('token') ?? '';
  const formToken = await boundFormToken(environment, verifySubject(token));
  const body = html`<h1>Confirm your email address</h1>
<p>Confirm that this email address is yours to finish signing up for Kassa.</p>
<form method="post" action="${pagesPath(environment)}/verify-email">
<input type="hidden" name="form_token" value="${formToken}">
<input type="hidden" name="token" value="${token}">
<div class="actions"><button type="submit">Confirm my email address</button></div>
</form>`;
  return page(body, { title: 'Confirm your email', environment: environment.name });
}

async function verify(environment: Environment, request: OAuthRequest, now: Date): Promise<OAuthResponse> {
  const form = formBody(request);
  const token = form.get('token') ?? '';
  if (!sameOriginPost(environment, request) || !(await checkBoundFormToken(environment, verifySubject(token), form.get('form_token')))) {
    return page(html`<h1>Not confirmed</h1><p class="error" role="alert">This form did not come from this site. Open the link you were sent again.</p>`, { title: 'Confirm your email', environment: environment.name, status: 403 });
  }
  const result = await environment.graphql!(operations.verifyEmail, { token }, anonymous(environment, request, now));
  if (result.errors?.length) {
    const body = html`<h1>Not confirmed</h1><p class="error" role="alert">${result.errors[0].message.replace(/^token: /, '')}</p>`;
    return page(body, { title: 'Confirm your email', environment: environment.name, status: 400 });
  }
  const { email } = (result.data as { userEmailVerify: { email: string } }).userEmailVerify;
  const body = html`<h1>Email confirmed</h1>
<p role="status"><strong>${email}</strong> is confirmed. You can now create organizations.</p>
<p><a href="${pagesPath(environment)}/login">Sign in</a></p>`;
  return page(body, { title: 'Email confirmed', environment: environment.name });
}

export const signUpPages: OAuthRoute[] = [
  { method: 'GET', path: '/oauth2/sign-up', handler: showSignUp },
  { method: 'POST', path: '/oauth2/sign-up', handler: signUp },
  { method: 'GET', path: '/oauth2/verify-email', handler: showVerify },
  { method: 'POST', path: '/oauth2/verify-email', handler: verify },
];
