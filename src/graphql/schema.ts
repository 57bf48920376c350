// Assembles the schema: each resource module registers its types and fields on the builder.
import { lexicographicSortSchema } from 'graphql';
import { builder } from './builder.ts';
import './roots.ts';
import '../modules/users/schema.ts';
import '../modules/organizations/schema.ts';
import '../modules/products/schema.ts';

export const schema = lexicographicSortSchema(builder.toSchema());
