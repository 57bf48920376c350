import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { generateToken } from '../../src/auth/tokens.ts';
import { createLogger } from '../../src/logger.ts';

function capture() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: createLogger('info', sink), lines };
}

describe('the logger', () => {
  it('writes no secret Kassa issued, wherever it appears in the line', () => {
    const { logger, lines } = capture();
    const secrets = (['oat', 'at', 'rt', 'pat', 'cst', 'whs', 'cs', 'us', 'ac', 'rat'] as const).map((kind) => generateToken('service', kind));
    logger.info({ query: `?token=${secrets[0]}`, body: { nested: [`Bearer ${secrets[1]}`] } }, `refresh ${secrets[2]} failed`);
    logger.error({ err: new Error(`bad token ${secrets[3]}`) }, 'unexpected error');
    logger.warn({ headers: { authorization: `Bearer ${secrets[4]}`, cookie: `kassa_session=${secrets[7]}` }, client_secret: secrets[6] }, secrets.slice(5).join(' '));
    const checkoutSecret = 'service_c_' + 'A'.repeat(30) + '-_';
    logger.info({ path: `/v1/checkouts/client/${checkoutSecret}` }, `glued token%3D${secrets[0]}x and x_${secrets[1]}`);
    secrets.push(checkoutSecret);
    const written = lines.join('\n');
    for (const secret of secrets) expect(written).not.toContain(secret);
    expect(written).toContain('service_rt_[redacted]');
    expect(written).toContain('[redacted]');
  });

  it('keeps what is public: client ids, request ids, paths', () => {
    const { logger, lines } = capture();
    const clientId = generateToken('service', 'ci');
    logger.info({ path: '/v1/products/', clientId }, 'request');
    expect(lines.join('')).toContain(clientId);
    expect(lines.join('')).toContain('/v1/products/');
  });
});
