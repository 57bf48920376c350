// ESLint for the printed GraphQL contract only (schema.graphql): every type, field, argument, input
// field and enum value carries a description, and names follow the conventions the schema already
// keeps. TypeScript sources are not linted here. Run with `npm run lint:schema`.
import graphqlPlugin from '@graphql-eslint/eslint-plugin';

export default [
  {
    files: ['schema.graphql'],
    languageOptions: {
      parser: graphqlPlugin.parser,
      parserOptions: { graphQLConfig: { schema: 'schema.graphql' } },
    },
    plugins: { '@graphql-eslint': graphqlPlugin },
    rules: {
      ...graphqlPlugin.configs['flat/schema-recommended'].rules,
      // A resource is identified by `id: UUID!` (live events by `id: ID!`, their stream position).
      // Pages, payloads and values nested in a resource have no identity of their own.
      '@graphql-eslint/strict-id-in-types': [
        'error',
        {
          acceptedIdNames: ['id'],
          acceptedIdTypes: ['UUID', 'ID'],
          exceptions: {
            // `…List` pages, `…Connection`s and their `…Edge`s (a cursor and the item); `…Properties` a benefit's
            // settings; `…Created`, `…Updated`, `…Rotated` payloads that carry the resource beside
            // a one-time secret.
            suffixes: ['List', 'Connection', 'Edge', 'Properties', 'Created', 'Updated', 'Rotated'],
            types: [
              // Root types, grouping fields.
              'CoreQuery',
              'CoreMutation',
              'CustomerPortalQuery',
              'CustomerPortalMutation',
              // Values that belong to the resource they are nested in.
              'Address',
              'AttachedCustomField',
              'BenefitLicenseKeyActivations',
              'BenefitLicenseKeyExpiration',
              'CheckoutBillingAddressFields',
              'CustomerOrderInvoice',
              'CustomerOrderPaymentConfirmation',
              'CustomerOrderPaymentStatus',
              'CustomerOrganization',
              'CustomFieldAnswer',
              'CustomFieldSelectOption',
              'FileLink',
              'FileUploadMultipart',
              'FileUploadPart',
              'OrderInvoice',
              'OrganizationDetails',
              'OrganizationFeatureSettings',
              'OrganizationNotificationSettings',
              'OrganizationSocialLink',
              'OrganizationSubscriptionSettings',
              'Pagination',
              'PageInfo',
              'PaymentMethodCardMetadata',
              'UserSession',
              // A meter's aggregation belongs to the meter; names, ingestion results and quantities
              // are computed from events, never stored as such.
              'MeterAggregation',
              'EventName',
              'EventsIngestResult',
              'MeterQuantities',
              'MeterQuantity',
              // The answer to a sign-up: where the email went, the same whether or not the address had an account.
              'SignUpRequested',
              // Computed answers with no identity: metrics over a range and their definitions and limits.
              'Metric',
              'MetricPeriod',
              'Metrics',
              'MetricsIntervalLimit',
              'MetricsIntervalsLimits',
              'MetricsLimits',
              'MetricsResponse',
              'MetricsTotals',
            ],
          },
        },
      ],
      '@graphql-eslint/require-description': [
        'error',
        {
          types: true,
          rootField: true,
          FieldDefinition: true,
          InputValueDefinition: true,
          EnumValueDefinition: true,
          DirectiveDefinition: true,
        },
      ],
      '@graphql-eslint/naming-convention': [
        'error',
        {
          types: 'PascalCase',
          FieldDefinition: 'camelCase',
          InputValueDefinition: 'camelCase',
          Argument: 'camelCase',
          DirectiveDefinition: 'camelCase',
          // Enum values are the wire strings the REST API and webhooks also carry (`one_time`,
          // `past_due`), so they stay snake_case rather than GraphQL's customary UPPER_CASE.
          EnumValueDefinition: 'snake_case',
          'EnumTypeDefinition,EnumTypeExtension': { forbiddenPrefixes: ['Enum'], forbiddenSuffixes: ['Enum'] },
          'InterfaceTypeDefinition,InterfaceTypeExtension': { forbiddenPrefixes: ['Interface'], forbiddenSuffixes: ['Interface'] },
          'UnionTypeDefinition,UnionTypeExtension': { forbiddenPrefixes: ['Union'], forbiddenSuffixes: ['Union'] },
          'ObjectTypeDefinition,ObjectTypeExtension': { forbiddenPrefixes: ['Type'], forbiddenSuffixes: ['Type'] },
          // A mutation is named resource first, then one verb of a closed set (`productCreate`,
          // `webhookEndpointRotateSecret`), so related mutations sort together and read alike.
          // `core` and `customerPortal` group the surfaces; deprecated first names stay until clients move.
          'FieldDefinition[parent.name.value=/Mutation$/]': {
            style: 'camelCase',
            requiredPattern:
              /^(core|customerPortal|signIn|signOut|signUp|[a-z][A-Za-z0-9]*(Create|Update|Delete|Revoke|Cancel|Confirm|Generate|Activate|Deactivate|Validate|Verify|Redeliver|RotateSecret|UploadComplete|Ingest))$/,
            ignorePattern: '^(fileUploaded|webhookEndpointResetSecret)$',
          },
          // A list of a resource is its plural; a lookup its singular; both resource-first.
          'FieldDefinition[parent.name.value=/Query$/]': { forbiddenPrefixes: ['get', 'list', 'find', 'all'] },
          // Input types end in Input.
          'InputObjectTypeDefinition': { requiredPattern: /Input$/ },
        },
      ],
    },
  },
];
