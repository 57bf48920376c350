// The documented JSON of usage events and meters: the selections REST responses render them from
// (see wire/shape.ts for the mapping). A meter's filter is an opaque scalar, so its clauses keep
// their own keys.
import { customerWire } from './customers.ts';

export const eventWire = `id timestamp organizationId customerId customer { ${customerWire} } externalCustomerId externalId name source metadata`;
export const EventWire = /* GraphQL */ `fragment EventWire on Event { ${eventWire} }`;

export const eventNameWire = 'name source occurrences firstSeen lastSeen';

export const meterWire = 'id createdAt modifiedAt metadata name filter aggregation { func property } organizationId archivedAt';
export const MeterWire = /* GraphQL */ `fragment MeterWire on Meter { ${meterWire} }`;

export const customerMeterFieldsWire = 'id createdAt modifiedAt customerId meterId consumedUnits creditedUnits balance';
export const CustomerMeterWire = /* GraphQL */ `fragment CustomerMeterWire on CustomerMeter { ${customerMeterFieldsWire} customer { ${customerWire} } meter { ${meterWire} } }`;
export const CustomerCustomerMeterWire = /* GraphQL */ `fragment CustomerCustomerMeterWire on CustomerCustomerMeter { ${customerMeterFieldsWire} meter { id createdAt modifiedAt name } }`;
