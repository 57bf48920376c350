// The forms of the signed-in pages (sign-out, consent) carry a CSRF token made for their session:
// a token taken from one session's page is refused with another session's cookie, even when both
// sessions are the same user's. The sign-in form's token is bound to its own cookie the same way.
import { beforeAll, describe, expect, it } from 'vitest';
import { Browser, formFields, issuerOf, openAuthorization, registerClient, userSessionToken, type RegisteredClient } from '../helpers/oauth.ts';
import { useTestServer } from '../helpers/use-test-server.ts';

const t = useTestServer({ organizations: { org: 'production', other: 'production' } });

const redirectUri = 'http://127.0.0.1:9/callback';
let issuer: string;
let client: RegisteredClient;

beforeAll(async () => {
  issuer = issuerOf(t.server);
  client = await registerClient(t.server, 'production', await userSessionToken(t.server, 'production', t.org.userEmail, t.org.userPassword), { redirect_uris: [redirectUri] });
});

const owner = () => ({ email: t.org.userEmail, password: t.org.userPassword });
const authorization = () => ({ response_type: 'code', client_id: client.client_id, redirect_uri: redirectUri, scope: 'openid products:read', state: 's' });

/** A browser signed in as `user` through the pages: a session of its own. */
async function signedIn(user: { email: string; password: string }) {
  const browser = new Browser(t.server.url);
  const page = await browser.get(`${issuer}/oauth2/login`);
  const answer = await browser.post(`${issuer}/oauth2/login`, { ...formFields(page.text), ...user });
  expect(answer.status).toBe(303);
  expect(browser.cookies.get('kassa_session')).toMatch(/_us_/);
  return browser;
}

/** The CSRF token of the sign-out form the browser's session is shown. */
async function signOutToken(browser: Browser) {
  const page = await browser.get(`${issuer}/oauth2/login`);
  expect(page.text).toContain('<h1>Signed in</h1>');
  return formFields(page.text).csrf_token;
}

describe('sign-out form', () => {
  it("refuses one session's token with another session of the same user, and takes each session's own", async () => {
    const first = await signedIn(owner());
    const second = await signedIn(owner());
    const firstToken = await signOutToken(first);
    const secondToken = await signOutToken(second);
    expect(firstToken).not.toBe(secondToken);
    const cookie = second.cookies.get('kassa_session');

    const crossed = await second.post(`${issuer}/oauth2/logout`, { csrf_token: firstToken });
    expect(crossed.status).toBe(303);
    expect(crossed.headers.getSetCookie()).toEqual([]);
    expect(second.cookies.get('kassa_session')).toBe(cookie);
    expect((await second.get(`${issuer}/oauth2/login`)).text).toContain('<h1>Signed in</h1>');

    const own = await second.post(`${issuer}/oauth2/logout`, { csrf_token: secondToken });
    expect(own.status).toBe(303);
    expect(own.headers.getSetCookie().join('\n')).toMatch(/kassa_session=; .*Max-Age=0/);
    expect((await second.get(`${issuer}/oauth2/login`)).text).toContain('<h1>Sign in to Kassa</h1>');
    // The first session is untouched by the second one's sign-out.
    expect((await first.get(`${issuer}/oauth2/login`)).text).toContain('<h1>Signed in</h1>');
  });

  it("refuses another user's token", async () => {
    const victim = await signedIn(owner());
    const attacker = await signedIn({ email: t.other.userEmail, password: t.other.userPassword });
    const stolen = await signOutToken(attacker);
    const answer = await victim.post(`${issuer}/oauth2/logout`, { csrf_token: stolen });
    expect(answer.headers.getSetCookie()).toEqual([]);
    expect((await victim.get(`${issuer}/oauth2/login`)).text).toContain('<h1>Signed in</h1>');
  });
});

describe('consent form', () => {
  it("refuses one session's token with another session of the same user: no code", async () => {
    const first = await signedIn(owner());
    const second = await signedIn(owner());
    const firstPage = await openAuthorization(first, issuer, authorization(), owner());
    const secondPage = await openAuthorization(second, issuer, authorization(), owner());
    expect([firstPage.status, secondPage.status]).toEqual([200, 200]);
    const firstFields = formFields(firstPage.text);
    const secondFields = formFields(secondPage.text);
    expect(firstFields.csrf_token).not.toBe(secondFields.csrf_token);

    const crossed = await second.post(`${issuer}/oauth2/authorize`, { ...secondFields, csrf_token: firstFields.csrf_token, decision: 'approve', organization_id: t.org.organizationId });
    expect(crossed.status).toBe(400);
    expect(crossed.text).toContain('The consent form has expired or did not come from this site.');
    expect(crossed.location).toBeNull();

    const own = await second.post(`${issuer}/oauth2/authorize`, { ...secondFields, decision: 'approve', organization_id: t.org.organizationId });
    expect(own.status).toBe(303);
    expect(new URL(own.location!).searchParams.get('code')).toMatch(/_ac_/);
  });
});

describe('sign-in form', () => {
  it("refuses a token made for another browser's CSRF cookie", async () => {
    const mine = new Browser(t.server.url);
    const theirs = new Browser(t.server.url);
    const myPage = await mine.get(`${issuer}/oauth2/login`);
    const theirPage = await theirs.get(`${issuer}/oauth2/login`);
    const refused = await mine.post(`${issuer}/oauth2/login`, { ...formFields(myPage.text), csrf_token: formFields(theirPage.text).csrf_token, ...owner() });
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('This form has expired or did not come from this site. Please sign in again.');
    expect(mine.cookies.has('kassa_session')).toBe(false);
    const accepted = await mine.post(`${issuer}/oauth2/login`, { ...formFields(myPage.text), ...owner() });
    expect(accepted.status).toBe(303);
    expect(mine.cookies.get('kassa_session')).toMatch(/_us_/);
  });
});
