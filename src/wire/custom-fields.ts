// The documented JSON of custom fields: the selections REST responses render it from (see
// wire/shape.ts for the mapping). Properties a field does not have are left out, not null
// (wire/constants.ts lists them).

const formWire = 'formLabel formHelpText formPlaceholder';

/** A custom field with the properties of its type. */
export const customFieldWire = `id createdAt modifiedAt metadata type slug name organizationId
  ... on CustomFieldText { properties { ${formWire} textarea minLength maxLength } }
  ... on CustomFieldNumber { properties { ${formWire} ge le } }
  ... on CustomFieldDate { properties { ${formWire} ge le } }
  ... on CustomFieldCheckbox { properties { ${formWire} } }
  ... on CustomFieldSelect { properties { ${formWire} options { value label } } }`;

/** A custom field as a product carries it: where it is asked, and whether it must be answered. */
export const attachedCustomFieldWire = `customFieldId order required customField { ${customFieldWire} }`;

export const CustomFieldWire = /* GraphQL */ `fragment CustomFieldWire on CustomField { ${customFieldWire} }`;
