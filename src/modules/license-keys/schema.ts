import type PrismaTypes from '../../generated/prisma/pothos-types.ts';
import { builder, type PrismaFieldBuilder } from '../../graphql/builder.ts';
import { Node, type NodeLoader } from '../../graphql/node.ts';
import { withoutId } from '../../graphql/shared-fields.ts';
import { NotPermittedError, raises } from '../../graphql/errors.ts';
import { MetadataScalar, type Metadata } from '../../graphql/metadata.ts';
import { listType, pageArgs, pageQuery, connectionType, relationArgs, relationPage, relationQuery, relationWindow } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import { Customer } from '../customers/schema.ts';
import type { LicenseKeyStatus as LicenseKeyStatuses } from '../../generated/prisma/enums.ts';
import {
  activateLicenseKey,
  deactivateLicenseKey,
  displayKey,
  getLicenseKey,
  getLicenseKeyActivation,
  listLicenseKeys,
  maxActivationLimit,
  updateLicenseKey,
  usageLimitReached,
  validateLicenseKey,
} from './service.ts';

// What the key checks answer besides the errors any field may.
const usageExceeded = { error: usageLimitReached(0), when: 'Counting the usage asked for would take the key past its usage limit.' };
const activationRefused = { error: new NotPermittedError(), when: 'The key has expired, takes no activations, or has all the activations it allows.' };

export const LicenseKeyStatus = builder.enumType('LicenseKeyStatus', {
  description: 'Whether a license key works. Only a granted key validates, activates or deactivates.',
  values: {
    granted: { description: 'The customer holds it: it works (until expiresAt, if set).' },
    revoked: { description: 'Its grant was revoked; it works again if the benefit is granted again.' },
    disabled: { description: 'The organization turned it off (licenseKeyUpdate).' },
  } satisfies Record<LicenseKeyStatuses, object>,
});

type ActivationFieldBuilder = PrismaFieldBuilder<'LicenseKeyActivation'>;

/** An activation's own fields, without the key it belongs to. */
export const licenseKeyActivationFields = (t: ActivationFieldBuilder) => ({
  id: t.expose('id', { type: 'UUID', description: "The activation's id." }),
  licenseKeyId: t.expose('licenseKeyId', { type: 'UUID', description: 'The key activated.' }),
  label: t.exposeString('label', { description: 'Names the device or installation, as the software gave it.' }),
  meta: t.field({ type: MetadataScalar, description: 'Key-value data the software stored with the activation.', resolve: (activation) => activation.meta as Metadata }),
  createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the key was activated.' }),
  modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true, description: 'When the activation was last changed; null if never.' }),
});

export const LicenseKeyActivation = builder.prismaObject('LicenseKeyActivation', {
  description: 'One device or installation a license key is activated on; it counts against the activation limit.',
  fields: (t) => ({
    ...licenseKeyActivationFields(t as unknown as ActivationFieldBuilder),
    licenseKey: t.relation('licenseKey', { description: 'The key activated.' }),
  }),
});

type LicenseKeyFieldBuilder = PrismaFieldBuilder<'LicenseKey'>;

// The key's own fields, shared by LicenseKey, ValidatedLicenseKey (the key with the activation
// checked) and the portal's CustomerLicenseKey; each links the customer as its readers may see them.
export const licenseKeyFields = (t: LicenseKeyFieldBuilder) => ({
  id: t.exposeID('id', { description: "The key's id (not the key itself). Its global id (see Node)." }),
  createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the key was first granted.' }),
  modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true, description: 'When the key was last changed or validated; null if never.' }),
  organizationId: t.expose('organizationId', { type: 'UUID', description: 'The organization that issued it.' }),
  customerId: t.expose('customerId', { type: 'UUID', description: 'The customer who holds it.' }),
  benefitId: t.expose('benefitId', { type: 'UUID', description: 'The license_keys benefit that granted it.' }),
  key: t.exposeString('key', { description: "The key: the benefit's prefix, if any, then 40 uppercase hex digits in five dash-separated groups." }),
  displayKey: t.string({ description: 'The key masked but for its last group, for showing where it must not be read.', resolve: (k) => displayKey(k.key) }),
  status: t.expose('status', { type: LicenseKeyStatus, description: 'Whether the key works.' }),
  limitActivations: t.exposeInt('limitActivations', { nullable: true, description: 'How many activations the key allows; none when null.' }),
  usage: t.exposeInt('usage', { description: 'Uses counted so far, by validations with incrementUsage.' }),
  limitUsage: t.exposeInt('limitUsage', { nullable: true, description: 'How many uses the key allows; null: no limit.' }),
  validations: t.exposeInt('validations', { description: 'How many times the key was validated.' }),
  lastValidatedAt: t.expose('lastValidatedAt', { type: 'DateTime', nullable: true, description: 'When the key was last validated; null if never.' }),
  expiresAt: t.expose('expiresAt', { type: 'DateTime', nullable: true, description: 'When the key stops validating and activating; null: never.' }),
});

/** What a license key is to anyone who may see it: LicenseKey, ValidatedLicenseKey and CustomerLicenseKey implement it. */
export const LicenseKeyFields = builder.prismaInterface('LicenseKey', {
  variant: 'LicenseKeyFields',
  description: "The fields every view of a license key shares: the key, its status, usage and limits. LicenseKey is the organization's view, ValidatedLicenseKey a validation's answer, CustomerLicenseKey its customer's view.",
  fields: (t) => withoutId(licenseKeyFields(t as unknown as LicenseKeyFieldBuilder)),
});

export const LicenseKey = builder.prismaObject('LicenseKey', {
  interfaces: [Node, LicenseKeyFields],
  description: "A license key a customer holds through a license_keys benefit; the organization's software validates it.",
  fields: (t) => ({
    ...licenseKeyFields(t as unknown as LicenseKeyFieldBuilder),
    customer: t.relation('customer', { description: 'The customer who holds it.' }),
    activations: t.relation('activations', { description: 'Its activations, oldest first.', query: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] } }),
  }),
});

type Validated = PrismaTypes['LicenseKey']['Shape'] & { activation?: PrismaTypes['LicenseKeyActivation']['Shape'] | null };

export const ValidatedLicenseKey = builder.prismaObject('LicenseKey', {
  variant: 'ValidatedLicenseKey',
  interfaces: [LicenseKeyFields],
  description: 'A license key just validated, with the activation the validation named.',
  fields: (t) => ({
    ...licenseKeyFields(t as unknown as LicenseKeyFieldBuilder),
    customer: t.relation('customer', { description: 'The customer who holds it.' }),
    activation: t.field({ type: LicenseKeyActivation, nullable: true, description: 'The activation named by activationId; null when none was named.', resolve: (k) => (k as Validated).activation ?? null }),
  }),
});

const LicenseKeyList = listType('LicenseKey', LicenseKey);

const LicenseKeyUpdateInput = builder.inputType('LicenseKeyUpdateInput', {
  description: 'Fields sent as null clear their limit or expiry; fields not sent are left as they are.',
  fields: (t) => ({
    status: t.field({ type: LicenseKeyStatus, description: 'disabled turns the key off; granted turns it back on.' }),
    usage: t.int({ description: 'Sets the usage count, 0 or more.' }),
    limitActivations: t.int({ description: `From 1 to ${maxActivationLimit}; null: the key cannot be activated.` }),
    limitUsage: t.int({ description: 'At least 1; null: no limit.' }),
    expiresAt: t.field({ type: 'DateTime', description: 'When the key stops working; null: never.' }),
  }),
});

const LicenseKeyValidateInput = builder.inputType('LicenseKeyValidateInput', {
  description: 'A key to check, and what else it must match.',
  fields: (t) => ({
    key: t.string({ required: true, description: 'The key as the customer has it.' }),
    organizationId: t.field({ type: 'UUID', required: true, description: 'The organization that issued it.' }),
    activationId: t.field({ type: 'UUID', description: 'Also check this activation belongs to the key.' }),
    benefitId: t.field({ type: 'UUID', description: 'Also check the key was granted by this benefit.' }),
    customerId: t.field({ type: 'UUID', description: 'Also check the key belongs to this customer.' }),
    incrementUsage: t.int({ description: 'Adds to the usage, 0 or more; refused when it would exceed the usage limit.' }),
    conditions: t.field({ type: MetadataScalar, description: 'Conditions to match. Not supported: ignored.' }),
  }),
});

const LicenseKeyActivateInput = builder.inputType('LicenseKeyActivateInput', {
  description: 'A key to activate on a device or installation.',
  fields: (t) => ({
    key: t.string({ required: true, description: 'The key as the customer has it.' }),
    organizationId: t.field({ type: 'UUID', required: true, description: 'The organization that issued it.' }),
    label: t.string({ required: true, description: 'Names the device or installation, at most 255 characters.' }),
    conditions: t.field({ type: MetadataScalar, description: 'Not supported: only an empty object is accepted.' }),
    meta: t.field({ type: MetadataScalar, description: 'Key-value data to keep with the activation, such as a device id.' }),
  }),
});

const LicenseKeyDeactivateInput = builder.inputType('LicenseKeyDeactivateInput', {
  description: 'An activation to remove, with its key.',
  fields: (t) => ({
    key: t.string({ required: true, description: 'The key as the customer has it.' }),
    organizationId: t.field({ type: 'UUID', required: true, description: 'The organization that issued it.' }),
    activationId: t.field({ type: 'UUID', required: true, description: 'The activation to remove.' }),
  }),
});

builder.objectFields(CoreQuery, (t) => ({
  licenseKeys: t.field({
    type: LicenseKeyList,
    description: 'The license keys of the organizations the token reaches, oldest first.',
    authScopes: { scope: ['license_keys:read', 'license_keys:write'] },
    args: {
      ...pageArgs(t.arg),
      organizationId: t.arg({ type: ['UUID'], description: 'Only these organizations; all reachable ones when omitted.' }),
      benefitId: t.arg({ type: ['UUID'], description: 'Only keys granted by these benefits.' }),
    },
    resolve: (_root, args, ctx, info) => listLicenseKeys(ctx, args, pageQuery(ctx, info)),
  }),
  licenseKey: t.prismaField({
    type: 'LicenseKey',
    description: 'One license key by id; RESOURCE_NOT_FOUND if the token does not reach it.',
    authScopes: { scope: ['license_keys:read', 'license_keys:write'] },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The key's id." }) },
    resolve: (query, _root, { id }, ctx) => getLicenseKey(ctx, id, query),
  }),
  licenseKeyActivation: t.prismaField({
    type: 'LicenseKeyActivation',
    description: 'One activation of a key; RESOURCE_NOT_FOUND if the token does not reach the key, or the key has no such activation.',
    authScopes: { scope: ['license_keys:read', 'license_keys:write'] },
    args: {
      id: t.arg({ type: 'UUID', required: true, description: 'The license key.' }),
      activationId: t.arg({ type: 'UUID', required: true, description: "The activation's id." }),
    },
    resolve: (query, _root, { id, activationId }, ctx) => getLicenseKeyActivation(ctx, id, activationId, query),
  }),
}));

builder.objectFields(CoreMutation, (t) => ({
  licenseKeyUpdate: t.prismaField({
    type: 'LicenseKey',
    description: "Changes a key's status, usage, limits or expiry. RESOURCE_NOT_FOUND if the token does not reach it; BAD_USER_INPUT for a value out of range.",
    authScopes: { scope: 'license_keys:write' },
    args: {
      id: t.arg({ type: 'UUID', required: true, description: "The key's id." }),
      input: t.arg({ type: LicenseKeyUpdateInput, required: true, description: 'The fields to change.' }),
    },
    resolve: (query, _root, { id, input }, ctx) => updateLicenseKey(ctx, id, input, query),
  }),
  licenseKeyValidate: t.prismaField({
    type: ValidatedLicenseKey,
    description: `Validates a key of one of the token's organizations and counts the validation. RESOURCE_NOT_FOUND for an unknown key, one not granted (revoked or disabled), expired, or not matching the activation, benefit or customer named; BAD_REQUEST when incrementUsage would pass the usage limit.`,
    authScopes: { scope: 'license_keys:write' },
    args: { input: t.arg({ type: LicenseKeyValidateInput, required: true, description: 'The key and what it must match.' }) },
    extensions: raises(usageExceeded),
    resolve: (query, _root, { input }, ctx) => validateLicenseKey(ctx, 'core', input, query),
  }),
  licenseKeyActivate: t.prismaField({
    type: 'LicenseKeyActivation',
    description: `Activates a key of one of the token's organizations on a device. RESOURCE_NOT_FOUND for an unknown key, one not granted (revoked or disabled); NOT_PERMITTED when the key is expired, allows no activations, or has reached its limit.`,
    authScopes: { scope: 'license_keys:write' },
    args: { input: t.arg({ type: LicenseKeyActivateInput, required: true, description: 'The key and the device.' }) },
    extensions: raises(activationRefused),
    resolve: (query, _root, { input }, ctx) => activateLicenseKey(ctx, 'core', input, query),
  }),
  licenseKeyDeactivate: t.boolean({
    description: `Removes an activation and returns true, freeing its place under the activation limit. RESOURCE_NOT_FOUND for an unknown key, one not granted (revoked or disabled), or an unknown activation.`,
    authScopes: { scope: 'license_keys:write' },
    args: { input: t.arg({ type: LicenseKeyDeactivateInput, required: true, description: 'The key and the activation.' }) },
    resolve: async (_root, { input }, ctx) => {
      await deactivateLicenseKey(ctx, 'core', input);
      return true;
    },
  }),
}));

// The customer's software checks its key without a token: holding the key is the capability.
builder.mutationFields((t) => ({
  licenseKeyValidate: t.prismaField({
    type: ValidatedLicenseKey,
    description: "Validates a key of the organization named, for the customer's software; no token needed. Errors as for core.licenseKeyValidate.",
    args: { input: t.arg({ type: LicenseKeyValidateInput, required: true, description: 'The key and what it must match.' }) },
    extensions: raises(usageExceeded),
    resolve: (query, _root, { input }, ctx) => validateLicenseKey(ctx, 'public', input, query),
  }),
  licenseKeyActivate: t.prismaField({
    type: 'LicenseKeyActivation',
    description: "Activates a key of the organization named on a device, for the customer's software; no token needed. Errors as for core.licenseKeyActivate.",
    args: { input: t.arg({ type: LicenseKeyActivateInput, required: true, description: 'The key and the device.' }) },
    extensions: raises(activationRefused),
    resolve: (query, _root, { input }, ctx) => activateLicenseKey(ctx, 'public', input, query),
  }),
  licenseKeyDeactivate: t.boolean({
    description: "Removes an activation of a key of the organization named, for the customer's software; no token needed. Errors as for core.licenseKeyDeactivate.",
    args: { input: t.arg({ type: LicenseKeyDeactivateInput, required: true, description: 'The key and the activation.' }) },
    resolve: async (_root, { input }, ctx) => {
      await deactivateLicenseKey(ctx, 'public', input);
      return true;
    },
  }),
}));

/** node(id:) answers for license keys as core.licenseKey does. */
export const licenseKeyNodeLoader: NodeLoader = { surface: 'core', model: 'licenseKey', typeName: 'LicenseKey', scopes: ['license_keys:read', 'license_keys:write'], load: getLicenseKey };

// A customer's license keys, read with the customer: one statement per page of customers.
builder.prismaObjectField(Customer, 'licenseKeys', (t) =>
  t.field({
    type: connectionType('LicenseKey', LicenseKey),
    nullable: true,
    description: "The license keys the customer holds, newest first. Null, with NOT_PERMITTED, for a token without license_keys:read.",
    authScopes: { scope: ['license_keys:read', 'license_keys:write'] },
    args: relationArgs(t.arg),
    select: (args, _ctx, nested) => ({
      licenseKeys: relationQuery(nested({ orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], ...relationWindow(args) }, ['edges', 'node'])),
      _count: { select: { licenseKeys: true } },
    }),
    resolve: (parent, args) => relationPage(parent.licenseKeys, parent._count.licenseKeys, args),
  }),
);
