import { queryFromInfo } from '@pothos/plugin-prisma';
import type PrismaTypes from '../../generated/prisma/pothos-types.ts';
import { builder, type PrismaFieldBuilder } from '../../graphql/builder.ts';
import { NotPermittedError, raises } from '../../graphql/errors.ts';
import { MetadataScalar, type Metadata } from '../../graphql/metadata.ts';
import { listType, pageArgs } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import { LicenseKeyStatus as LicenseKeyStatuses } from '../../generated/prisma/enums.ts';
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

export const LicenseKeyStatus = builder.enumType(LicenseKeyStatuses, { name: 'LicenseKeyStatus' });

type ActivationFieldBuilder = PrismaFieldBuilder<'LicenseKeyActivation'>;

/** An activation's own fields, without the key it belongs to. */
export const licenseKeyActivationFields = (t: ActivationFieldBuilder) => ({
  id: t.expose('id', { type: 'UUID' }),
  licenseKeyId: t.expose('licenseKeyId', { type: 'UUID' }),
  label: t.exposeString('label'),
  meta: t.field({ type: MetadataScalar, resolve: (activation) => activation.meta as Metadata }),
  createdAt: t.expose('createdAt', { type: 'DateTime' }),
  modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true }),
});

export const LicenseKeyActivation = builder.prismaObject('LicenseKeyActivation', {
  description: 'One device or installation a license key is activated on; it counts against the activation limit.',
  fields: (t) => ({
    ...licenseKeyActivationFields(t as unknown as ActivationFieldBuilder),
    licenseKey: t.relation('licenseKey'),
  }),
});

type LicenseKeyFieldBuilder = PrismaFieldBuilder<'LicenseKey'>;

// The key's own fields, shared by LicenseKey, ValidatedLicenseKey (the key with the activation
// checked) and the portal's CustomerLicenseKey; each links the customer as its readers may see them.
export const licenseKeyFields = (t: LicenseKeyFieldBuilder) => ({
  id: t.expose('id', { type: 'UUID' }),
  createdAt: t.expose('createdAt', { type: 'DateTime' }),
  modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true }),
  organizationId: t.expose('organizationId', { type: 'UUID' }),
  customerId: t.expose('customerId', { type: 'UUID' }),
  benefitId: t.expose('benefitId', { type: 'UUID' }),
  key: t.exposeString('key'),
  displayKey: t.string({ description: 'The key masked but for its last group, for showing where it must not be read.', resolve: (k) => displayKey(k.key) }),
  status: t.expose('status', { type: LicenseKeyStatus }),
  limitActivations: t.exposeInt('limitActivations', { nullable: true, description: 'How many activations the key allows; none when null.' }),
  usage: t.exposeInt('usage'),
  limitUsage: t.exposeInt('limitUsage', { nullable: true }),
  validations: t.exposeInt('validations'),
  lastValidatedAt: t.expose('lastValidatedAt', { type: 'DateTime', nullable: true }),
  expiresAt: t.expose('expiresAt', { type: 'DateTime', nullable: true }),
});

export const LicenseKey = builder.prismaObject('LicenseKey', {
  description: "A license key a customer holds through a license_keys benefit; the organization's software validates it.",
  fields: (t) => ({
    ...licenseKeyFields(t as unknown as LicenseKeyFieldBuilder),
    customer: t.relation('customer'),
    activations: t.relation('activations', { query: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] } }),
  }),
});

type Validated = PrismaTypes['LicenseKey']['Shape'] & { activation?: PrismaTypes['LicenseKeyActivation']['Shape'] | null };

export const ValidatedLicenseKey = builder.prismaObject('LicenseKey', {
  variant: 'ValidatedLicenseKey',
  description: 'A license key just validated, with the activation the validation named.',
  fields: (t) => ({
    ...licenseKeyFields(t as unknown as LicenseKeyFieldBuilder),
    customer: t.relation('customer'),
    activation: t.field({ type: LicenseKeyActivation, nullable: true, resolve: (k) => (k as Validated).activation ?? null }),
  }),
});

const LicenseKeyList = listType('LicenseKey', LicenseKey);

const LicenseKeyUpdateInput = builder.inputType('LicenseKeyUpdateInput', {
  description: 'Fields sent as null clear their limit or expiry; fields not sent are left as they are.',
  fields: (t) => ({
    status: t.field({ type: LicenseKeyStatus }),
    usage: t.int(),
    limitActivations: t.int({ description: `From 1 to ${maxActivationLimit}.` }),
    limitUsage: t.int({ description: 'At least 1.' }),
    expiresAt: t.field({ type: 'DateTime' }),
  }),
});

const LicenseKeyValidateInput = builder.inputType('LicenseKeyValidateInput', {
  fields: (t) => ({
    key: t.string({ required: true }),
    organizationId: t.field({ type: 'UUID', required: true }),
    activationId: t.field({ type: 'UUID', description: 'Also check this activation belongs to the key.' }),
    benefitId: t.field({ type: 'UUID', description: 'Also check the key was granted by this benefit.' }),
    customerId: t.field({ type: 'UUID', description: 'Also check the key belongs to this customer.' }),
    incrementUsage: t.int({ description: 'Adds to the usage; refused when it would exceed the usage limit.' }),
    conditions: t.field({ type: MetadataScalar }),
  }),
});

const LicenseKeyActivateInput = builder.inputType('LicenseKeyActivateInput', {
  fields: (t) => ({
    key: t.string({ required: true }),
    organizationId: t.field({ type: 'UUID', required: true }),
    label: t.string({ required: true, description: 'Names the device or installation.' }),
    conditions: t.field({ type: MetadataScalar, description: 'Not supported: only an empty object is accepted.' }),
    meta: t.field({ type: MetadataScalar }),
  }),
});

const LicenseKeyDeactivateInput = builder.inputType('LicenseKeyDeactivateInput', {
  fields: (t) => ({
    key: t.string({ required: true }),
    organizationId: t.field({ type: 'UUID', required: true }),
    activationId: t.field({ type: 'UUID', required: true }),
  }),
});

builder.objectFields(CoreQuery, (t) => ({
  licenseKeys: t.field({
    type: LicenseKeyList,
    authScopes: { scope: ['license_keys:read', 'license_keys:write'] },
    args: {
      ...pageArgs(t.arg),
      organizationId: t.arg({ type: ['UUID'] }),
      benefitId: t.arg({ type: ['UUID'] }),
    },
    resolve: (_root, args, ctx, info) => listLicenseKeys(ctx, args, queryFromInfo({ context: ctx, info, path: ['items'] })),
  }),
  licenseKey: t.prismaField({
    type: 'LicenseKey',
    authScopes: { scope: ['license_keys:read', 'license_keys:write'] },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, { id }, ctx) => getLicenseKey(ctx, id, query),
  }),
  licenseKeyActivation: t.prismaField({
    type: 'LicenseKeyActivation',
    authScopes: { scope: ['license_keys:read', 'license_keys:write'] },
    args: { id: t.arg({ type: 'UUID', required: true, description: 'The license key.' }), activationId: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, { id, activationId }, ctx) => getLicenseKeyActivation(ctx, id, activationId, query),
  }),
}));

builder.objectFields(CoreMutation, (t) => ({
  licenseKeyUpdate: t.prismaField({
    type: 'LicenseKey',
    authScopes: { scope: 'license_keys:write' },
    args: { id: t.arg({ type: 'UUID', required: true }), input: t.arg({ type: LicenseKeyUpdateInput, required: true }) },
    resolve: (query, _root, { id, input }, ctx) => updateLicenseKey(ctx, id, input, query),
  }),
  licenseKeyValidate: t.prismaField({
    type: ValidatedLicenseKey,
    description: "Validates a key of one of the token's organizations.",
    authScopes: { scope: 'license_keys:write' },
    args: { input: t.arg({ type: LicenseKeyValidateInput, required: true }) },
    extensions: raises(usageExceeded),
    resolve: (query, _root, { input }, ctx) => validateLicenseKey(ctx, 'core', input, query),
  }),
  licenseKeyActivate: t.prismaField({
    type: 'LicenseKeyActivation',
    description: "Activates a key of one of the token's organizations on a device.",
    authScopes: { scope: 'license_keys:write' },
    args: { input: t.arg({ type: LicenseKeyActivateInput, required: true }) },
    extensions: raises(activationRefused),
    resolve: (query, _root, { input }, ctx) => activateLicenseKey(ctx, 'core', input, query),
  }),
  licenseKeyDeactivate: t.boolean({
    description: 'Removes an activation, freeing its place under the activation limit.',
    authScopes: { scope: 'license_keys:write' },
    args: { input: t.arg({ type: LicenseKeyDeactivateInput, required: true }) },
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
    description: "Validates a key of the organization named, for the customer's software; no token needed.",
    args: { input: t.arg({ type: LicenseKeyValidateInput, required: true }) },
    extensions: raises(usageExceeded),
    resolve: (query, _root, { input }, ctx) => validateLicenseKey(ctx, 'public', input, query),
  }),
  licenseKeyActivate: t.prismaField({
    type: 'LicenseKeyActivation',
    description: "Activates a key of the organization named on a device, for the customer's software; no token needed.",
    args: { input: t.arg({ type: LicenseKeyActivateInput, required: true }) },
    extensions: raises(activationRefused),
    resolve: (query, _root, { input }, ctx) => activateLicenseKey(ctx, 'public', input, query),
  }),
  licenseKeyDeactivate: t.boolean({
    description: "Removes an activation of a key of the organization named, for the customer's software; no token needed.",
    args: { input: t.arg({ type: LicenseKeyDeactivateInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      await deactivateLicenseKey(ctx, 'public', input);
      return true;
    },
  }),
}));
