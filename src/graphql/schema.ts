// Assembles the schema: each resource module registers its types and fields on the builder.
import { lexicographicSortSchema, printSchema } from 'graphql';
import { builder } from './builder.ts';
import './roots.ts';
import './node.ts';
import '../modules/users/schema.ts';
import '../modules/organizations/schema.ts';
import '../modules/personal-access-tokens/schema.ts';
import '../modules/oauth-clients/schema.ts';
import '../modules/products/schema.ts';
import '../modules/customers/schema.ts';
import '../modules/customer-sessions/schema.ts';
import '../modules/orders/schema.ts';
import '../modules/checkouts/schema.ts';
import '../modules/refunds/schema.ts';
import '../modules/disputes/schema.ts';
import '../modules/benefits/schema.ts';
import '../modules/subscriptions/schema.ts';
import '../modules/license-keys/schema.ts';
import '../modules/files/schema.ts';
import '../modules/webhooks/schema.ts';
import '../modules/webhook-deliveries/schema.ts';
import '../modules/live-events/schema.ts';
import '../modules/customer-portal/schema.ts';

export const schema = builder.toSchema();

/** The schema as committed in schema.graphql: the contract clients and tools read. */
export function printContract(): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
