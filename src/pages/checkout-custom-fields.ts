// The custom fields of the hosted checkout page: each field the product asks rendered as its own
// input (text or textarea, number, date, checkbox, select) with its label, help text and
// placeholder; the buyer's answers read back from the form as the schema's `customFieldData`; and
// the schema's refusals at `customFieldData.<slug>` shown next to the input they are about. The
// page (pages/checkout.ts) only selects these fields, renders the fieldset and passes the form on.
import { html, type Html } from './html.ts';

/** What the page selects of a checkout for its custom fields. */
export const customFieldsSelection = `
  customFieldData
  attachedCustomFields {
    required
    customField {
      type slug name
      ... on CustomFieldText { properties { formLabel formHelpText formPlaceholder textarea minLength maxLength } }
      ... on CustomFieldNumber { properties { formLabel formHelpText formPlaceholder ge le } }
      ... on CustomFieldDate { properties { formLabel formHelpText formPlaceholder ge le } }
      ... on CustomFieldCheckbox { properties { formLabel formHelpText formPlaceholder } }
      ... on CustomFieldSelect { properties { formLabel formHelpText formPlaceholder options { value label } } }
    }
  }`;

interface FieldProperties {
  formLabel: string | null;
  formHelpText: string | null;
  formPlaceholder: string | null;
  textarea?: boolean | null;
  minLength?: number | null;
  maxLength?: number | null;
  ge?: number | null;
  le?: number | null;
  options?: { value: string; label: string }[];
}

export interface AttachedFieldView {
  required: boolean;
  customField: { type: 'text' | 'number' | 'date' | 'checkbox' | 'select'; slug: string; name: string; properties: FieldProperties };
}

export interface CustomFieldsView {
  customFieldData: Record<string, string | number | boolean | null>;
  attachedCustomFields: AttachedFieldView[];
}

type Errors = Partial<Record<string, string>>;

/** The form name (and element id) of a field's input: slugs are lowercase letters, digits, - and _. */
export const customFieldInputName = (slug: string) => `field-${slug}`;

/** A Unix timestamp's calendar day (UTC), as a date input's min and max take it. */
const isoDay = (timestamp: number) => new Date(timestamp * 1000).toISOString().slice(0, 10);

function fieldInput(field: AttachedFieldView, value: string, errors: Errors): Html {
  const { type, slug, name, properties } = field.customField;
  const id = customFieldInputName(slug);
  const label = properties.formLabel ?? name;
  const error = errors[id];
  const described = [error ? `${id}-error` : '', properties.formHelpText ? `${id}-hint` : ''].filter(Boolean).join(' ');
  const common = html` id="${id}" name="${id}"${field.required ? html` required` : ''}${described ? html` aria-describedby="${described}"` : ''}${error ? html` aria-invalid="true"` : ''}`;
  const placeholder = properties.formPlaceholder ? html` placeholder="${properties.formPlaceholder}"` : '';
  const hint = properties.formHelpText ? html`<p class="muted hint" id="${id}-hint">${properties.formHelpText}</p>` : '';
  const errorLine = error ? html`<p class="error" id="${id}-error">${error}</p>` : '';
  const optional = field.required ? '' : html` <span class="muted">(optional)</span>`;
  if (type === 'checkbox') {
    return html`<div class="choice"><input type="checkbox"${common}${value === 'true' ? html` checked` : ''}><label for="${id}">${label}${optional}</label></div>
${hint}${errorLine}`;
  }
  let control: Html;
  switch (type) {
    case 'text': {
      const lengths = html`${properties.minLength != null ? html` minlength="${properties.minLength}"` : ''}${properties.maxLength != null ? html` maxlength="${properties.maxLength}"` : ''}`;
      control = properties.textarea
        ? html`<textarea rows="3"${common}${placeholder}${lengths}>${value}</textarea>`
        : html`<input type="text"${common}${placeholder}${lengths} value="${value}">`;
      break;
    }
    case 'number':
      control = html`<input type="number" step="1" inputmode="numeric"${common}${placeholder}${properties.ge != null ? html` min="${properties.ge}"` : ''}${properties.le != null ? html` max="${properties.le}"` : ''} value="${value}">`;
      break;
    case 'date':
      control = html`<input type="date"${common}${properties.ge != null ? html` min="${isoDay(properties.ge)}"` : ''}${properties.le != null ? html` max="${isoDay(properties.le)}"` : ''} value="${value}">`;
      break;
    case 'select':
      control = html`<select${common}><option value="">${properties.formPlaceholder ?? 'Choose…'}</option>${(properties.options ?? []).map(
        (option) => html`<option value="${option.value}"${option.value === value ? html` selected` : ''}>${option.label}</option>`,
      )}</select>`;
      break;
  }
  return html`<label for="${id}">${label}${optional}</label>
${hint}
${errorLine}
${control}`;
}

/**
 * The fieldset of the product's custom fields, filled with what the buyer typed (after a refused
 * post) or else the answers stored on the checkout. Nothing when the product asks none.
 */
export function customFieldsFieldset(checkout: CustomFieldsView, typed: URLSearchParams | null, errors: Errors): Html | string {
  if (!checkout.attachedCustomFields.length) return '';
  const valueOf = (field: AttachedFieldView) => {
    const name = customFieldInputName(field.customField.slug);
    if (typed) return field.customField.type === 'checkbox' ? String(typed.has(name)) : (typed.get(name) ?? '');
    const stored = checkout.customFieldData[field.customField.slug];
    return stored === null || stored === undefined ? '' : String(stored);
  };
  return html`<fieldset class="custom-fields">
<legend>More about your order</legend>
${checkout.attachedCustomFields.map((field) => fieldInput(field, valueOf(field), errors))}
</fieldset>`;
}

/**
 * The buyer's answers as the schema takes them: text as typed, whole numbers as numbers, dates as
 * YYYY-MM-DD, checkboxes as true or false, an option's value; an empty input is no answer. What
 * the form itself can tell is wrong (a number that is not one) comes back as errors by input name.
 */
export function customFieldAnswers(checkout: CustomFieldsView, form: URLSearchParams): { answers: Record<string, unknown>; errors: Errors } {
  const answers: Record<string, unknown> = {};
  const errors: Errors = {};
  for (const { customField } of checkout.attachedCustomFields) {
    const name = customFieldInputName(customField.slug);
    if (customField.type === 'checkbox') {
      answers[customField.slug] = form.has(name);
      continue;
    }
    const typed = form.get(name)?.trim() ?? '';
    if (!typed) continue;
    if (customField.type === 'number') {
      if (/^-?\d+$/.test(typed) && Number.isSafeInteger(Number(typed))) answers[customField.slug] = Number(typed);
      else errors[name] = 'Enter a whole number.';
    } else answers[customField.slug] = typed;
  }
  return { answers, errors };
}

/** The input a refusal's location names, when it is one of the custom fields: `['input', 'customFieldData', slug]`. */
export function customFieldErrorKey(loc: (string | number)[]): string | null {
  return loc[1] === 'customFieldData' && typeof loc[2] === 'string' ? customFieldInputName(loc[2]) : null;
}
