// What discord and slack endpoints receive: a message a person reads, whatever the resource holds.
import { describe, expect, it } from 'vitest';
import { money, webhookBody } from '../../src/webhooks/formats.ts';

const at = new Date('2027-03-01T12:00:00.000Z');

describe('webhook bodies', () => {
  it('raw: exactly type, timestamp and data, in that order', () => {
    const body = webhookBody('raw', { type: 'customer.created', createdAt: at, data: { id: 'c1', email: 'a@example.com' } });
    expect(body).toBe('{"type":"customer.created","timestamp":"2027-03-01T12:00:00.000Z","data":{"id":"c1","email":"a@example.com"}}');
  });

  it('writes amounts in the currency’s own minor units', () => {
    expect([money(1999, 'usd'), money(500, 'jpy'), money(1000, 'kwd'), money(null, 'usd'), money(100, 'nope')]).toEqual(['$19.99', '¥500', 'KWD\u00a01.000', null, null]);
    // ISO 4217's decimals, not the locale data's: huf has two, iqd three.
    expect([money(175000, 'huf'), money(1500, 'iqd')]).toEqual(['HUF\u00a01,750.00', 'IQD\u00a01.500']);
  });

  it('discord: mentions are switched off, so a customer named @everyone pings no one', () => {
    const message = JSON.parse(webhookBody('discord', { type: 'customer.created', createdAt: at, data: { id: 'c1', email: 'a@example.com', name: '@everyone' } }));
    expect(message.allowed_mentions).toEqual({ parse: [] });
    expect(message.embeds[0].fields).toContainEqual({ name: 'Name', value: '@everyone', inline: true });
    expect(message.content).toBe('Customer created: a@example.com');
  });

  it('slack: text a customer controls cannot become a link or a mention', () => {
    const message = JSON.parse(webhookBody('slack', { type: 'customer.updated', createdAt: at, data: { id: 'c1', email: 'a@example.com', name: '<!channel> & <http://evil|x>' } }));
    expect(JSON.stringify(message)).not.toContain('<!channel>');
    expect(message.blocks[2].fields).toContainEqual({ type: 'mrkdwn', text: '*Name*\n&lt;!channel&gt; &amp; &lt;http://evil|x&gt;' });
  });

  it('discord: a dispute reads as its amount, reason, status and order', () => {
    const data = { id: 'd1', status: 'lost', reason: 'fraudulent', amount: 1999, currency: 'usd', order_id: 'o1', closed_at: at.toISOString() };
    const message = JSON.parse(webhookBody('discord', { type: 'dispute.closed', createdAt: at, data }));
    expect(message.content).toBe('Dispute closed: $19.99');
    expect(message.embeds[0].fields.map((f: { name: string; value: string }) => [f.name, f.value])).toEqual([
      ['Amount', '$19.99'],
      ['Reason', 'fraudulent'],
      ['Status', 'lost'],
      ['Order', 'o1'],
      ['ID', 'd1'],
    ]);
  });

  it('a resource without the usual fields still gives a message: its title and id', () => {
    const message = JSON.parse(webhookBody('slack', { type: 'benefit_grant.revoked', createdAt: at, data: { id: 'g1' } }));
    expect(message).toEqual({
      text: 'Benefit grant revoked',
      blocks: [
        { type: 'header', text: { type: 'plain_text', text: 'Benefit grant revoked' } },
        { type: 'section', fields: [{ type: 'mrkdwn', text: '*ID*\ng1' }] },
      ],
    });
  });
});
