// The oauth case of `npm run bench`: the token endpoint and userinfo under load, on loopback.
// The target process issues BENCH_OAUTH_CODES authorization codes (20,000 by default) for a
// confidential client with PKCE, as the consent page issues them. Then three runs of
// BENCH_CONNECTIONS connections:
// - the authorization-code grant, each code exchanged once (the run lasts until every code is
//   spent), each answer's refresh and access tokens kept;
// - the refresh grant, each refresh token of the first run used once (refresh tokens rotate);
// - userinfo with one access token, for BENCH_SECONDS.
// Each reports requests per second and p50/p99, beside its target: 1.5 times what
// node-oidc-provider 9.13.3 served on this 2-core machine (code grant about 2,000 req/s,
// refresh about 2,150, userinfo about 7,400). Every answer must be 200.
import { readFileSync, rmSync } from 'node:fs';
import autocannon from 'autocannon';
import { databaseName, verdict } from './targets.ts';

export interface OAuthSeed {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  verifier: string;
  codesFile: string;
}

const targets = { code: 2000 * 1.5, refresh: 2150 * 1.5, userinfo: 7400 * 1.5 };

interface Run {
  name: string;
  result: autocannon.Result;
}

function check(run: Run) {
  const { result } = run;
  if (result.non2xx || result.errors || result.timeouts) throw new Error(`oauth ${run.name}: every response must be 200; got ${JSON.stringify(result.statusCodeStats)} and ${result.errors} errors`);
}

export async function benchOAuth(base: string, seed: OAuthSeed, seconds: number, connections: number): Promise<void> {
  const codes = readFileSync(seed.codesFile, 'utf8').split('\n').filter(Boolean);
  rmSync(seed.codesFile, { force: true });
  const tokenUrl = `${base}/v1/oauth2/token`;
  const headers = {
    'content-type': 'application/x-www-form-urlencoded',
    authorization: `Basic ${Buffer.from(`${encodeURIComponent(seed.clientId)}:${encodeURIComponent(seed.clientSecret)}`).toString('base64')}`,
  };
  const refreshTokens: string[] = [];
  let accessToken = '';
  const keepTokens = (status: number, body: string) => {
    if (status !== 200) return;
    const answer = JSON.parse(body) as { refresh_token?: string; access_token: string };
    if (answer.refresh_token) refreshTokens.push(answer.refresh_token);
    accessToken = answer.access_token;
  };

  /** One token request per item, each item's form sent once, the answers' tokens kept. */
  const grantEach = async (grant: string, items: string[], form: (item: string) => Record<string, string>) => {
    let next = 0;
    const result = await autocannon({
      url: tokenUrl,
      connections,
      amount: items.length,
      requests: [{ method: 'POST', headers, setupRequest: (request) => ({ ...request, body: new URLSearchParams(form(items[next++])).toString() }), onResponse: keepTokens }],
    });
    check({ name: grant, result });
    return result;
  };

  const code = await grantEach('authorization_code', codes, (item) => ({ grant_type: 'authorization_code', code: item, redirect_uri: seed.redirectUri, code_verifier: seed.verifier }));
  if (refreshTokens.length !== codes.length) throw new Error(`oauth: ${refreshTokens.length} refresh tokens for ${codes.length} codes`);
  const spent = refreshTokens.splice(0);
  const refresh = await grantEach('refresh_token', spent, (item) => ({ grant_type: 'refresh_token', refresh_token: item }));

  const userinfo = await autocannon({ url: `${base}/v1/oauth2/userinfo`, connections, duration: seconds, headers: { authorization: `Bearer ${accessToken}` } });
  check({ name: 'userinfo', result: userinfo });

  console.log(`\nOAuth: ${codes.length} codes exchanged, then each refresh token once, then userinfo for ${seconds}s; ${connections} connections, ${databaseName}\n`);
  const row = (name: string, result: autocannon.Result, target: number) => ({
    case: name,
    requests: result.requests.total,
    'req/s': Math.round(result.requests.average),
    'p50 ms': result.latency.p50,
    'p99 ms': result.latency.p99,
    ...verdict(Math.round(result.requests.average), { atLeast: target }),
  });
  console.table([row('authorization_code grant', code, targets.code), row('refresh_token grant', refresh, targets.refresh), row('userinfo', userinfo, targets.userinfo)]);
}
