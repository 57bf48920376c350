import type { RestRoute } from '../route.ts';
import { CustomerCustomerMeterWire, CustomerMeterWire, EventWire, eventNameWire, MeterWire } from '../../wire/usage.ts';

const eventFilters = '$organizationId: [UUID!], $customerId: [UUID!], $externalCustomerId: [String!], $source: [EventSource!]';
const eventFilterArgs = 'organizationId: $organizationId, customerId: $customerId, externalCustomerId: $externalCustomerId, source: $source';

// The fixed paths (/v1/events/ingest, /v1/events/names) come before /v1/events/{id}.
export const usageRoutes: RestRoute[] = [
  {
    method: 'POST',
    path: '/v1/events/ingest',
    body: 'input',
    operation: `mutation ($input: EventsIngestInput!) { core { eventsIngest(input: $input) { inserted duplicates } } }`,
  },
  {
    method: 'GET',
    path: '/v1/events/names',
    operation: `query ($page: Int, $limit: Int, ${eventFilters}, $query: String, $sorting: [EventNameSortOrder!]) {
      core { eventNames(page: $page, limit: $limit, ${eventFilterArgs}, query: $query, sorting: $sorting) {
        items { ${eventNameWire} } pagination { totalCount maxPage } } }
    }`,
  },
  {
    method: 'GET',
    path: '/v1/events/',
    operation: `query ($page: Int, $limit: Int, ${eventFilters}, $name: [String!], $startTimestamp: DateTime, $endTimestamp: DateTime,
        $meterId: UUID, $filter: String, $metadata: JSONObject, $sorting: [EventSortOrder!]) {
      core { events(page: $page, limit: $limit, ${eventFilterArgs}, name: $name, startTimestamp: $startTimestamp, endTimestamp: $endTimestamp,
          meterId: $meterId, filter: $filter, metadata: $metadata, sorting: $sorting) {
        items { ...EventWire } pagination { totalCount maxPage } } }
    } ${EventWire}`,
  },
  {
    method: 'GET',
    path: '/v1/events/{id}',
    operation: `query ($id: UUID!) { core { event(id: $id) { ...EventWire } } } ${EventWire}`,
  },
  {
    method: 'GET',
    path: '/v1/meters/',
    operation: `query ($page: Int, $limit: Int, $organizationId: [UUID!], $query: String, $isArchived: Boolean, $metadata: JSONObject, $sorting: [MeterSortOrder!]) {
      core { meters(page: $page, limit: $limit, organizationId: $organizationId, query: $query, isArchived: $isArchived, metadata: $metadata, sorting: $sorting) {
        items { ...MeterWire } pagination { totalCount maxPage } } }
    } ${MeterWire}`,
  },
  {
    method: 'POST',
    path: '/v1/meters/',
    body: 'input',
    status: 201,
    operation: `mutation ($input: MeterCreateInput!) { core { meterCreate(input: $input) { ...MeterWire } } } ${MeterWire}`,
  },
  {
    method: 'GET',
    path: '/v1/meters/{id}/quantities',
    operation: `query ($id: UUID!, $startTimestamp: DateTime!, $endTimestamp: DateTime!, $interval: TimeInterval!, $timezone: String,
        $customerId: [UUID!], $externalCustomerId: [String!], $metadata: JSONObject) {
      core { meterQuantities(id: $id, startTimestamp: $startTimestamp, endTimestamp: $endTimestamp, interval: $interval, timezone: $timezone,
          customerId: $customerId, externalCustomerId: $externalCustomerId, metadata: $metadata) { quantities { timestamp quantity } total } }
    }`,
  },
  {
    method: 'GET',
    path: '/v1/meters/{id}',
    operation: `query ($id: UUID!) { core { meter(id: $id) { ...MeterWire } } } ${MeterWire}`,
  },
  {
    method: 'PATCH',
    path: '/v1/meters/{id}',
    body: 'input',
    operation: `mutation ($id: UUID!, $input: MeterUpdateInput!) { core { meterUpdate(id: $id, input: $input) { ...MeterWire } } } ${MeterWire}`,
  },
  {
    method: 'GET',
    path: '/v1/customer-meters/',
    operation: `query ($page: Int, $limit: Int, $organizationId: [UUID!], $customerId: [UUID!], $externalCustomerId: [String!], $meterId: [UUID!], $sorting: [CustomerMeterSortOrder!]) {
      core { customerMeters(page: $page, limit: $limit, organizationId: $organizationId, customerId: $customerId, externalCustomerId: $externalCustomerId, meterId: $meterId, sorting: $sorting) {
        items { ...CustomerMeterWire } pagination { totalCount maxPage } } }
    } ${CustomerMeterWire}`,
  },
  {
    method: 'GET',
    path: '/v1/customer-meters/{id}',
    operation: `query ($id: UUID!) { core { customerMeter(id: $id) { ...CustomerMeterWire } } } ${CustomerMeterWire}`,
  },
  {
    method: 'GET',
    path: '/v1/customer-portal/meters/',
    operation: `query ($page: Int, $limit: Int, $meterId: [UUID!], $query: String, $sorting: [CustomerPortalMeterSortOrder!]) {
      customerPortal { meters(page: $page, limit: $limit, meterId: $meterId, query: $query, sorting: $sorting) {
        items { ...CustomerCustomerMeterWire } pagination { totalCount maxPage } } }
    } ${CustomerCustomerMeterWire}`,
  },
  {
    method: 'GET',
    path: '/v1/customer-portal/meters/{id}',
    operation: `query ($id: UUID!) { customerPortal { meter(id: $id) { ...CustomerCustomerMeterWire } } } ${CustomerCustomerMeterWire}`,
  },
];
