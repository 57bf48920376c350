// The password sign-in's throttle (src/auth/sessions.ts), through the GraphQL signIn mutation: five
// failed attempts per account and twenty per client address within fifteen minutes, the wait
// counted from the oldest failure that still holds the limit, successful sign-ins not counted.
// The server trusts 127.0.0.1 as a proxy, so each test signs in from its own client address and
// starts its own window on the server's clock.
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { newOrganization } from '../helpers/organizations.ts';
import { clockFrom, graphqlClient } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';

const t = useTestServer({ env: { TRUSTED_PROXIES: '127.0.0.1' }, resetClockAfterEach: true });

const signInMutation = 'mutation ($email: String!, $password: String!) { signIn(email: $email, password: $password) { token } }';

/** Signs in from `ip`: the status, the headers and the GraphQL answer. */
const signIn = (ip: string, email: string, password: string) => graphqlClient(t.server.base())(signInMutation, { email, password }, { 'x-forwarded-for': ip });
type Answer = Awaited<ReturnType<typeof signIn>>;

const code = (answer: Answer) => answer.body.errors?.[0]?.extensions.code ?? null;
const retryAfter = (answer: Answer) => answer.headers.get('retry-after');

function expectSignedIn(answer: Answer) {
  expect(answer.body.errors).toBeUndefined();
  expect(answer.body.data?.signIn?.token).toMatch(/_us_/);
}

/** A window of its own for each test: the clock starts `hours` hours on. */
const startClock = (hours: number) => clockFrom(t.server, hours);

describe('signing in with a password', () => {
  it('refuses the sixth attempt within the window, even with the right password, and says how long to wait', async () => {
    startClock(10);
    const victim = await newOrganization(t.server);
    for (let i = 0; i < 5; i++) expect(code(await signIn('10.1.0.1', victim.userEmail, 'wrong password'))).toBe('UNAUTHENTICATED');
    const throttled = await signIn('10.1.0.1', victim.userEmail, victim.userPassword);
    expect(throttled.status).toBe(429);
    expect(retryAfter(throttled)).toBe('900');
    expect(throttled.body.errors).toEqual([
      expect.objectContaining({ message: 'Too many failed sign-in attempts. Try again in 900 seconds.', extensions: expect.objectContaining({ code: 'TOO_MANY_ATTEMPTS', retryAfter: 900 }) }),
    ]);
    expect(throttled.body.data?.signIn ?? null).toBeNull();
  });

  it('counts the account however its email is written, and from any address', async () => {
    startClock(12);
    const victim = await newOrganization(t.server);
    const spellings = [victim.userEmail, victim.userEmail.toUpperCase(), ` ${victim.userEmail} `, victim.userEmail, victim.userEmail.toUpperCase()];
    for (const [i, email] of spellings.entries()) expect(code(await signIn(`10.2.0.${i + 1}`, email, 'wrong password'))).toBe('UNAUTHENTICATED');
    expect(code(await signIn('10.2.1.1', victim.userEmail, victim.userPassword))).toBe('TOO_MANY_ATTEMPTS');
  });

  it('admits again once the oldest failure holding the limit leaves the fifteen-minute window', async () => {
    const at = startClock(14);
    const victim = await newOrganization(t.server);
    for (let i = 0; i < 5; i++) {
      at(i * 60);
      expect(code(await signIn('10.3.0.1', victim.userEmail, 'wrong password'))).toBe('UNAUTHENTICATED');
    }
    // At 4:59.5 the refused attempt counts too: of the six failures, the fifth newest (at 1:00)
    // leaves the window at 16:00, 660.5 seconds on, rounded up.
    at(299.5);
    const throttled = await signIn('10.3.0.1', victim.userEmail, victim.userPassword);
    expect(throttled.status).toBe(429);
    expect(retryAfter(throttled)).toBe('661');
    // At 16:00 exactly the failure at 1:00 is out (the window is the last fifteen minutes, its
    // start excluded): four failures remain, so this attempt is the fifth and is admitted.
    at(960);
    expectSignedIn(await signIn('10.3.0.1', victim.userEmail, victim.userPassword));
  });

  it('does not count successful sign-ins as failures', async () => {
    startClock(17);
    const user = await newOrganization(t.server);
    for (let i = 0; i < 7; i++) {
      expectSignedIn(await signIn('10.4.0.1', user.userEmail, user.userPassword));
    }
    for (let i = 0; i < 5; i++) expect(code(await signIn('10.4.0.1', user.userEmail, 'wrong password'))).toBe('UNAUTHENTICATED');
    expect(code(await signIn('10.4.0.1', user.userEmail, user.userPassword))).toBe('TOO_MANY_ATTEMPTS');
  });

  it('refuses an address after twenty failures on any accounts, while other addresses still sign in', async () => {
    startClock(19);
    const user = await newOrganization(t.server);
    for (let i = 0; i < 20; i++) expect(code(await signIn('10.5.0.1', `nobody-${randomUUID()}@example.com`, 'wrong password'))).toBe('UNAUTHENTICATED');
    const throttled = await signIn('10.5.0.1', user.userEmail, user.userPassword);
    expect(throttled.status).toBe(429);
    expect(retryAfter(throttled)).toBe('900');
    expectSignedIn(await signIn('10.5.0.2', user.userEmail, user.userPassword));
  });

  it('lets an account with four failures still sign in, and an address with nineteen', async () => {
    startClock(21);
    const user = await newOrganization(t.server);
    for (let i = 0; i < 4; i++) expect(code(await signIn('10.6.0.1', user.userEmail, 'wrong password'))).toBe('UNAUTHENTICATED');
    for (let i = 0; i < 15; i++) expect(code(await signIn('10.6.0.1', `nobody-${randomUUID()}@example.com`, 'wrong password'))).toBe('UNAUTHENTICATED');
    // Twenty attempts from this address, the twentieth admitted: four plus fifteen failures before it.
    expectSignedIn(await signIn('10.6.0.1', user.userEmail, user.userPassword));
  });
});
