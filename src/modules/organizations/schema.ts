import { builder, holdsAnyScope, type BuilderTypes, type PrismaFieldBuilder } from '../../graphql/builder.ts';
import { Node, type NodeLoader } from '../../graphql/node.ts';
import { listType, pageArgs, pageQuery } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import { scopeEnum } from '../../graphql/scope-enums.ts';
import { sortOrderEnum } from '../../graphql/sorting.ts';
import { resourceScopes, type ResourceScope } from '../../auth/scopes.ts';
import { ProrationBehavior } from '../subscriptions/schema.ts';
import {
  createAccessToken,
  createOrganizationForUser,
  getOrganization,
  listAccessTokens,
  listOrganizations,
  organizationSortProperties,
  revokeAccessToken,
  updateOrganization,
  type SubscriptionSettings,
} from './service.ts';

type OrganizationFieldBuilder = PrismaFieldBuilder<'Organization'>;

const OrganizationSocialPlatform = builder.enumType('OrganizationSocialPlatform', {
  description: 'Where a social link points.',
  values: {
    x: { description: 'X (Twitter).' },
    github: { description: 'GitHub.' },
    facebook: { description: 'Facebook.' },
    instagram: { description: 'Instagram.' },
    youtube: { description: 'YouTube.' },
    tiktok: { description: 'TikTok.' },
    linkedin: { description: 'LinkedIn.' },
    other: { description: 'Any other site.' },
  } as const,
});

const OrganizationSwitchingFrom = builder.enumType('OrganizationSwitchingFrom', {
  description: 'The payment platform an organization moves from.',
  values: {
    paddle: { description: 'Paddle.' },
    lemon_squeezy: { description: 'Lemon Squeezy.' },
    gumroad: { description: 'Gumroad.' },
    stripe: { description: 'Stripe.' },
    other: { description: 'Another platform.' },
  } as const,
});

type StoredSocialLink = { platform: 'x' | 'github' | 'facebook' | 'instagram' | 'youtube' | 'tiktok' | 'linkedin' | 'other'; url: string };
type StoredDetails = {
  about: string;
  product_description: string;
  intended_use: string;
  customer_acquisition: string[];
  future_annual_revenue: number;
  switching: boolean;
  switching_from: 'paddle' | 'lemon_squeezy' | 'gumroad' | 'stripe' | 'other' | null;
  previous_annual_revenue: number;
};

const OrganizationSocialLink = builder.objectRef<StoredSocialLink>('OrganizationSocialLink').implement({
  description: "A link to one of the organization's pages elsewhere.",
  fields: (t) => ({
    platform: t.expose('platform', { type: OrganizationSocialPlatform, description: 'The site it points to.' }),
    url: t.exposeString('url', { description: 'The address of the page.' }),
  }),
});

const OrganizationFeatureSettings = builder.objectRef<{ issue_funding_enabled: boolean }>('OrganizationFeatureSettings').implement({
  description: "The organization's optional features. Kassa keeps them and acts on none.",
  fields: (t) => ({
    issueFundingEnabled: t.exposeBoolean('issue_funding_enabled', { description: 'Whether issue funding is enabled. Kept only.' }),
  }),
});

const OrganizationSubscriptionSettings = builder.objectRef<SubscriptionSettings>('OrganizationSubscriptionSettings').implement({
  description: 'How subscriptions to the organization behave.',
  fields: (t) => ({
    allowMultipleSubscriptions: t.exposeBoolean('allow_multiple_subscriptions', {
      description: 'Whether a customer may hold several subscriptions at once. Kept only: Kassa does not refuse a second subscription.',
    }),
    allowCustomerUpdates: t.exposeBoolean('allow_customer_updates', {
      description: "Whether customers may change their subscription's product in the Customer Portal; when false only the organization may (customers can still cancel).",
    }),
    prorationBehavior: t.expose('proration_behavior', { type: ProrationBehavior, description: 'How a change of product is billed: prorate, the one Kassa offers.' }),
  }),
});

const OrganizationNotificationSettings = builder.objectRef<{ new_order: boolean; new_subscription: boolean }>('OrganizationNotificationSettings').implement({
  description: "Which emails the organization's members want. Kept only: Kassa sends none of them.",
  fields: (t) => ({
    newOrder: t.exposeBoolean('new_order', { description: 'An email for each new order.' }),
    newSubscription: t.exposeBoolean('new_subscription', { description: 'An email for each new subscription.' }),
  }),
});

const OrganizationDetails = builder.objectRef<StoredDetails>('OrganizationDetails').implement({
  description: 'What the organization told about its business. Not part of the REST shape of an organization.',
  fields: (t) => ({
    about: t.exposeString('about', { description: 'About the organization and its business.' }),
    productDescription: t.exposeString('product_description', { description: 'The digital products it sells.' }),
    intendedUse: t.exposeString('intended_use', { description: 'How it will use the API.' }),
    customerAcquisition: t.exposeStringList('customer_acquisition', { description: 'How it finds its customers.' }),
    futureAnnualRevenue: t.exposeInt('future_annual_revenue', { description: 'The revenue it expects in the next year, in US dollars.' }),
    switching: t.exposeBoolean('switching', { description: 'Whether it moves from another platform.' }),
    switchingFrom: t.expose('switching_from', { type: OrganizationSwitchingFrom, nullable: true, description: 'The platform it moves from; null if none was named.' }),
    previousAnnualRevenue: t.exposeInt('previous_annual_revenue', { description: 'Its revenue in the past year, in US dollars.' }),
  }),
});

/** An organization's public profile: all a customer may see of the organization they buy from. */
export const organizationFields = (t: OrganizationFieldBuilder) => ({
  id: t.exposeID('id', { description: "The organization's id. Its global id (see Node)." }),
  name: t.exposeString('name', { description: 'The name shown to customers.' }),
  slug: t.exposeString('slug', { description: 'The unique, URL-safe short name (lowercase letters, digits and `-`), as in the customer portal address.' }),
  createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the organization was created.' }),
  modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true, description: 'When the organization was last changed; null if never.' }),
  avatarUrl: t.exposeString('avatarUrl', { nullable: true, description: "The address of the organization's logo; null if none." }),
  email: t.exposeString('email', { nullable: true, description: "The organization's public contact email; null if none." }),
  website: t.exposeString('website', { nullable: true, description: "The organization's website; null if none." }),
  socials: t.field({ type: [OrganizationSocialLink], description: "Links to the organization's pages elsewhere.", resolve: (o) => o.socials as StoredSocialLink[] }),
  detailsSubmittedAt: t.expose('detailsSubmittedAt', { type: 'DateTime', nullable: true, description: 'When the organization first told about its business (details); null if never.' }),
  featureSettings: t.field({
    type: OrganizationFeatureSettings,
    nullable: true,
    description: "The organization's optional features.",
    resolve: (o) => o.featureSettings as { issue_funding_enabled: boolean },
  }),
  subscriptionSettings: t.field({ type: OrganizationSubscriptionSettings, description: 'How subscriptions to the organization behave.', resolve: (o) => o.subscriptionSettings as unknown as SubscriptionSettings }),
  notificationSettings: t.field({
    type: OrganizationNotificationSettings,
    description: "Which emails the organization's members want.",
    resolve: (o) => o.notificationSettings as { new_order: boolean; new_subscription: boolean },
  }),
});

export const Organization = builder.prismaObject('Organization', {
  interfaces: [Node],
  description: 'A merchant: it owns products, customers and everything sold.',
  fields: (t) => ({
    ...organizationFields(t as unknown as OrganizationFieldBuilder),
    // Checkouts, products and the portal embed this type for buyers and customers too: the business
    // details are the organization's own, null to anyone else (not an error, so their pages still
    // get whole answers).
    details: t.field({
      type: OrganizationDetails,
      nullable: true,
      description: 'What the organization told about its business; null if nothing yet, and null to a token without organizations:read (a buyer reading a checkout, a customer in the portal).',
      resolve: (o, _args, ctx) => (holdsAnyScope(ctx.principal, ['organizations:read', 'organizations:write']) ? (o.details as StoredDetails | null) : null),
    }),
  }),
});

const OrganizationSortOrder = sortOrderEnum(
  'OrganizationSortOrder',
  'organizations',
  {
    created_at: 'when the organization was created',
    slug: 'slug',
    name: 'name',
  } satisfies Record<(typeof organizationSortProperties)[number], string>,
  'OrganizationSortProperty',
);

const OrganizationSocialLinkInput = builder.inputType('OrganizationSocialLinkInput', {
  description: "A link to one of the organization's pages elsewhere.",
  fields: (t) => ({
    platform: t.field({ type: OrganizationSocialPlatform, required: true, description: 'The site it points to.' }),
    url: t.string({ required: true, description: 'An http or https address.' }),
  }),
});

const OrganizationDetailsInput = builder.inputType('OrganizationDetailsInput', {
  description: 'What the organization tells about its business.',
  fields: (t) => ({
    about: t.string({ required: true, description: 'About the organization and its business, 1 to 5000 characters.' }),
    productDescription: t.string({ required: true, description: 'The digital products it sells, 1 to 5000 characters.' }),
    intendedUse: t.string({ required: true, description: 'How it will use the API, 1 to 5000 characters.' }),
    customerAcquisition: t.stringList({ required: true, description: 'How it finds its customers.' }),
    futureAnnualRevenue: t.int({ required: true, description: 'The revenue it expects in the next year, in US dollars; 0 or more.' }),
    switching: t.boolean({ description: 'Whether it moves from another platform. Default: true.' }),
    switchingFrom: t.field({ type: OrganizationSwitchingFrom, description: 'The platform it moves from.' }),
    previousAnnualRevenue: t.int({ description: 'Its revenue in the past year, in US dollars; 0 or more. Default: 0.' }),
  }),
});

const OrganizationFeatureSettingsInput = builder.inputType('OrganizationFeatureSettingsInput', {
  description: "The organization's optional features.",
  fields: (t) => ({
    issueFundingEnabled: t.boolean({ description: 'Whether issue funding is enabled. Default: false.' }),
  }),
});

const OrganizationSubscriptionSettingsInput = builder.inputType('OrganizationSubscriptionSettingsInput', {
  description: 'How subscriptions to the organization behave; every field is given.',
  fields: (t) => ({
    allowMultipleSubscriptions: t.boolean({ required: true, description: 'Whether a customer may hold several subscriptions at once. Kept only.' }),
    allowCustomerUpdates: t.boolean({ required: true, description: "Whether customers may change their subscription's product in the Customer Portal." }),
    prorationBehavior: t.field({ type: ProrationBehavior, required: true, description: 'How a change of product is billed: prorate (invoice is refused: not available).' }),
  }),
});

const OrganizationNotificationSettingsInput = builder.inputType('OrganizationNotificationSettingsInput', {
  description: "Which emails the organization's members want; every field is given. Kept only.",
  fields: (t) => ({
    newOrder: t.boolean({ required: true, description: 'An email for each new order.' }),
    newSubscription: t.boolean({ required: true, description: 'An email for each new subscription.' }),
  }),
});

const organizationProfileInputFields = (t: PothosSchemaTypes.InputFieldBuilder<BuilderTypes, 'InputObject'>) => ({
  avatarUrl: t.string({ description: "An http or https address of the organization's logo; null removes it." }),
  email: t.string({ description: 'A public contact email; null removes it.' }),
  website: t.string({ description: 'An http or https address; null removes it.' }),
  socials: t.field({ type: [OrganizationSocialLinkInput], description: 'Links to its pages elsewhere, at most 20; replaces the list (null empties it).' }),
  details: t.field({ type: OrganizationDetailsInput, description: 'What it tells about its business; replaces what it told before.' }),
  featureSettings: t.field({ type: OrganizationFeatureSettingsInput, description: 'Its optional features; replaces them.' }),
  subscriptionSettings: t.field({ type: OrganizationSubscriptionSettingsInput, description: 'How its subscriptions behave; replaces the settings.' }),
  notificationSettings: t.field({ type: OrganizationNotificationSettingsInput, description: 'Which emails its members want; replaces the settings.' }),
});

const OrganizationCreateInput = builder.inputType('OrganizationCreateInput', {
  description: 'A new organization. Settings not given take their defaults.',
  fields: (t) => ({
    name: t.string({ required: true, description: 'The name shown to customers, 3 to 256 characters.' }),
    slug: t.string({ required: true, description: 'The unique short name: 3 to 64 lowercase letters, digits and single dashes between them. It cannot change later.' }),
    ...organizationProfileInputFields(t),
  }),
});

const OrganizationUpdateInput = builder.inputType('OrganizationUpdateInput', {
  description: 'Only the fields given change; null for a settings object changes nothing.',
  fields: (t) => ({
    name: t.string({ description: 'The name shown to customers, 3 to 256 characters. Null is refused.' }),
    ...organizationProfileInputFields(t),
  }),
});

const OrganizationAccessTokenScope = scopeEnum('OrganizationAccessTokenScope', 'A scope an organization access token may hold: a resource scope of the Core API.', resourceScopes);

export const OrganizationAccessToken = builder.prismaObject('OrganizationAccessToken', {
  description: "A token for an organization's backend. Only its hash is stored.",
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: "The token's id (not the token itself)." }),
    organizationId: t.expose('organizationId', { type: 'UUID', description: 'The organization the token acts for.' }),
    comment: t.exposeString('comment', { description: 'What the token is for, as given when it was created.' }),
    scopes: t.field({
      type: [OrganizationAccessTokenScope],
      description: 'The scopes granted, such as products_read; each appears once.',
      resolve: (token) => token.scopes as ResourceScope[],
    }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', nullable: true, description: 'When the token stops working; null if it never expires.' }),
    lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime', nullable: true, description: 'When a request last authenticated with the token; null if never.' }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true, description: 'When the token was revoked; null while it is live.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the token was created.' }),
  }),
});

const OrganizationList = listType('Organization', Organization);
const OrganizationAccessTokenList = listType('OrganizationAccessToken', OrganizationAccessToken);

const OrganizationAccessTokenCreated = builder
  .objectRef<Awaited<ReturnType<typeof createAccessToken>>>('OrganizationAccessTokenCreated')
  .implement({
    description: 'A new organization access token, with its secret.',
    fields: (t) => ({
      token: t.exposeString('token', { description: 'The token itself. Shown only in this response.' }),
      organizationAccessToken: t.field({ type: OrganizationAccessToken, description: 'The stored token, as later lists show it.', resolve: (created) => created.record }),
    }),
  });

const OrganizationAccessTokenCreateInput = builder.inputType('OrganizationAccessTokenCreateInput', {
  description: 'A new organization access token.',
  fields: (t) => ({
    organizationId: t.field({ type: 'UUID', description: 'Required unless the request is made with an organization token.' }),
    comment: t.string({ required: true, description: 'What the token is for, up to 200 characters.' }),
    scopes: t.field({ type: [OrganizationAccessTokenScope], required: true, description: 'At least one scope, such as products_read or orders_write.' }),
    expiresAt: t.field({ type: 'DateTime', description: 'When the token stops working, in the future; never when omitted.' }),
  }),
});

builder.objectFields(CoreQuery, (t) => ({
  organizations: t.field({
    type: OrganizationList,
    description: 'The organizations the token reaches (an organization token: its own; a user: those they belong to), oldest first unless `sorting` says otherwise.',
    authScopes: { scope: ['organizations:read', 'organizations:write'] },
    args: {
      ...pageArgs(t.arg),
      slug: t.arg.string({ description: 'Only the organization with this slug.' }),
      sorting: t.arg({ type: [OrganizationSortOrder], description: 'The order of the list, by the first entry, then the next for ties. Default: created_at_asc.' }),
    },
    resolve: (_root, args, ctx, info) => listOrganizations(ctx, args, pageQuery(ctx, info)),
  }),
  organization: t.prismaField({
    type: 'Organization',
    description: 'One organization the token reaches; RESOURCE_NOT_FOUND for any other.',
    authScopes: { scope: ['organizations:read', 'organizations:write'] },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The organization's id." }) },
    resolve: (query, _root, { id }, ctx) => getOrganization(ctx, id, query),
  }),
  organizationAccessTokens: t.field({
    type: OrganizationAccessTokenList,
    description: 'The live (not revoked) access tokens of the organizations the token reaches, newest first.',
    authScopes: { scope: ['organization_access_tokens:read', 'organization_access_tokens:write'] },
    args: { ...pageArgs(t.arg), organizationId: t.arg({ type: ['UUID'], description: 'Only these organizations; all reachable ones when omitted.' }) },
    resolve: (_root, args, ctx, info) => listAccessTokens(ctx, args, pageQuery(ctx, info)),
  }),
}));

builder.objectFields(CoreMutation, (t) => ({
  organizationCreate: t.prismaField({
    type: 'Organization',
    description:
      'Creates an organization with the signed-in user (a user session, personal or user-scoped OAuth token) as its member. An organization token cannot: NOT_PERMITTED. BAD_USER_INPUT names each invalid field, a slug already taken included.',
    authScopes: { $all: { principal: 'user', scope: 'organizations:write' } },
    args: { input: t.arg({ type: OrganizationCreateInput, required: true, description: 'The organization to create.' }) },
    resolve: (query, _root, { input }, ctx) => createOrganizationForUser(ctx, input, query),
  }),
  organizationUpdate: t.prismaField({
    type: 'Organization',
    description:
      "Changes an organization's profile and settings and sends organization.updated. RESOURCE_NOT_FOUND for an organization the token does not reach; BAD_USER_INPUT names each invalid field, and nothing changes.",
    authScopes: { scope: 'organizations:write' },
    args: {
      id: t.arg({ type: 'UUID', required: true, description: "The organization's id." }),
      input: t.arg({ type: OrganizationUpdateInput, required: true, description: 'The fields to change.' }),
    },
    resolve: (query, _root, { id, input }, ctx) => updateOrganization(ctx, id, input, query),
  }),
  organizationAccessTokenCreate: t.field({
    type: OrganizationAccessTokenCreated,
    description: 'Creates an organization access token. Only a member of the organization signed in with a password may: a token (personal or OAuth) would otherwise mint a wider, longer-lived one.',
    authScopes: { $all: { signedInUser: true, scope: 'organization_access_tokens:write' } },
    args: { input: t.arg({ type: OrganizationAccessTokenCreateInput, required: true, description: 'The token to create.' }) },
    resolve: (_root, { input }, ctx) => createAccessToken(ctx, input),
  }),
  organizationAccessTokenRevoke: t.prismaField({
    type: 'OrganizationAccessToken',
    description: 'Revokes a token at once: its next request gets 401. RESOURCE_NOT_FOUND if it is unknown or already revoked.',
    authScopes: { scope: 'organization_access_tokens:write' },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The token's id." }) },
    resolve: (query, _root, { id }, ctx) => revokeAccessToken(ctx, id, query),
  }),
}));

/** node(id:) answers for organizations as core.organization does. */
export const organizationNodeLoader: NodeLoader = { surface: 'core', model: 'organization', typeName: 'Organization', scopes: ['organizations:read', 'organizations:write'], load: getOrganization };
